package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/openai"
)

// formatOpenHands names OpenHands's event stream, in its V0 runtime's
// event_to_dict layout ({action or observation, args, content,
// tool_call_metadata}) or its agent SDK's ({kind: ActionEvent,
// ObservationEvent …}): a trajectory's list of events, or an evaluation's
// output.jsonl, one instance per line with its events under "history".
const formatOpenHands = "openhands"

// ohEvent is one OpenHands event: an action (the agent's or the user's) or
// an observation (what running an action returned). V0 events name their
// kind by "action" or "observation" (a string), the SDK's by "kind" (and
// their "observation" is an object); ids are numbers in V0, strings in the
// SDK.
type ohEvent struct {
	ID          json.RawMessage `json:"id"`
	Kind        string          `json:"kind"`
	Source      string          `json:"source"`
	Message     string          `json:"message"`
	Cause       json.RawMessage `json:"cause"`
	Action      json.RawMessage `json:"action"`
	Observation json.RawMessage `json:"observation"`
	Args        json.RawMessage `json:"args"`
	Content     json.RawMessage `json:"content"`
	Extras      struct {
		ExitCode *int `json:"exit_code"`
	} `json:"extras"`
	Success      *bool `json:"success"`
	ToolCallMeta *struct {
		FunctionName  string `json:"function_name"`
		ToolCallID    string `json:"tool_call_id"`
		ModelResponse *struct {
			ID      string `json:"id"`
			Model   string `json:"model"`
			Choices []struct {
				Message openai.ChatMessage `json:"message"`
			} `json:"choices"`
			Usage *openai.ChatUsage `json:"usage"`
		} `json:"model_response"`
	} `json:"tool_call_metadata"`
	ohSDKEvent
}

// ohSDKEvent are the fields of the agent SDK's events.
type ohSDKEvent struct {
	SystemPrompt *struct {
		Text string `json:"text"`
	} `json:"system_prompt"`
	Tools      json.RawMessage `json:"tools"`
	LLMMessage *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"llm_message"`
	Thought    json.RawMessage `json:"thought"`
	ToolName   string          `json:"tool_name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCall   *struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_call"`
	LLMResponseID   string `json:"llm_response_id"`
	RejectionReason string `json:"rejection_reason"`
	Error           string `json:"error"`
}

// ohArgs are the arguments of the actions the importer reads.
type ohArgs struct {
	Content string          `json:"content"`
	Tools   json.RawMessage `json:"tools"`
	Thought string          `json:"thought"`
}

// isOpenHandsEvent reports whether a record's fields are an OpenHands
// event's: a source and an action or an observation (V0), or one of the
// SDK's kinds of event.
func isOpenHandsEvent(f map[string]json.RawMessage) bool {
	if !has(f, "source") {
		return false
	}
	return has(f, "action") || has(f, "observation") || ohSDKKinds[jsonString(f["kind"])]
}

// ohSDKKinds are the agent SDK's kinds of event the importer knows.
var ohSDKKinds = map[string]bool{
	"SystemPromptEvent": true, "MessageEvent": true, "ActionEvent": true, "ObservationEvent": true,
	"UserRejectObservation": true, "AgentErrorEvent": true, "Condensation": true, "CondensationSummaryEvent": true,
	"CondensationRequest": true, "ConversationStateUpdateEvent": true, "PauseEvent": true, "ConversationErrorEvent": true,
}

// isOpenHandsOutput reports whether a record is an OpenHands evaluation's
// output line, or a dataset row: its "history" (or, without one, its
// "trajectory") holds events, not SWE-agent's messages. Only the first
// event is decoded.
func isOpenHandsOutput(f map[string]json.RawMessage) bool {
	events, ok := f["history"]
	if !ok {
		events = f["trajectory"]
	}
	first, ok := firstRecord(events)
	return ok && isOpenHandsEvent(first)
}

// parseOpenHandsAll imports OpenHands events: a JSON array of them (a
// trajectory), an object with them under "history" or "trajectory", or
// JSONL whose lines are such objects (an evaluation's output.jsonl: one
// recording per instance, named by its instance_id) or events.
func parseOpenHandsAll(name string, data []byte) ([]*Recording, error) {
	src := &source{name: name, data: data}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	var out []*Recording
	var events []rawValue
	var paths []string
	partial, err := records(src)(func(v rawValue, path string) error {
		var f map[string]json.RawMessage
		if err := src.decodeAt(v, path, &f); err != nil {
			return err
		}
		if isOpenHandsEvent(f) {
			events, paths = append(events, v), append(paths, path)
			return nil
		}
		key := "history"
		if !has(f, key) {
			key = "trajectory"
		}
		elems, err := src.arrayElems(v.off, f[key], path+"."+key)
		if err != nil {
			return err
		}
		var ps []string
		for i := range elems {
			ps = append(ps, fmt.Sprintf("%s.%s[%d]", path, key, i))
		}
		id := base
		if json.Unmarshal(f["instance_id"], &id) != nil || id == "" {
			id = fmt.Sprintf("%s/%d", base, len(out)+1)
		}
		rec, err := buildOpenHands(src, elems, ps, id)
		if err != nil {
			return err
		}
		if rec.Model == "" {
			rec.Model = ohEvalModel(f["metadata"])
		}
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(events) > 0 {
		rec, err := buildOpenHands(src, events, paths, base)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if partial && len(out) > 0 {
		last := out[len(out)-1]
		last.Warnings = append(last.Warnings, incompleteLine("file"))
	}
	var recs []*Recording
	for _, r := range out {
		if r.Calls() > 0 {
			recs = append(recs, r)
		}
	}
	if len(recs) == 0 {
		return nil, src.errAt(0, "", "no action of the agent", ErrNoModelCall)
	}
	return recs, nil
}

// ohBuilder builds one recording from one instance's events.
type ohBuilder struct {
	src     *source
	rec     *Recording
	calls   map[string]*Call  // a model response's id → its call
	byID    map[string]*Call  // a tool call id → its call
	byEvent map[string]string // an action's event id → its tool call id
	msgs    int
	// counts for the warnings
	noMeta, orphans, recalls, condensed int
	usage                               bool
}

// buildOpenHands maps one instance's events: the system message is the
// system prompt and its tools the tool schemas, a user message starts a
// turn, the agent's actions of one model response (tool_call_metadata's
// model_response) are one Call whose tool calls and text are that
// response's, and each observation answers its action's tool call.
// Without tool_call_metadata (an agent that does not call functions), each
// action is a call of its own, named by the action.
func buildOpenHands(src *source, elems []rawValue, paths []string, id string) (*Recording, error) {
	b := &ohBuilder{src: src, rec: &Recording{Source: src.name, Format: formatOpenHands, ID: id},
		calls: map[string]*Call{}, byID: map[string]*Call{}, byEvent: map[string]string{}}
	for i, v := range elems {
		var e ohEvent
		if err := src.decodeAt(v, paths[i], &e); err != nil {
			return nil, err
		}
		if err := b.add(v, paths[i], &e); err != nil {
			return nil, err
		}
	}
	b.rec.Warnings = b.warnings()
	return b.rec, nil
}

// add reads one event.
func (b *ohBuilder) add(v rawValue, path string, e *ohEvent) error {
	if e.Kind != "" {
		return b.addSDK(v, path, e)
	}
	action, observation := jsonString(e.Action), jsonString(e.Observation)
	var args ohArgs
	if len(e.Args) > 0 {
		if err := json.Unmarshal(e.Args, &args); err != nil {
			return b.src.errAt(v.off, path+".args", err.Error(), nil)
		}
	}
	switch {
	case action == "system":
		b.rec.System = args.Content
		if len(args.Tools) > 0 && string(args.Tools) != "null" {
			specs, err := ParseToolSpecs(args.Tools)
			if err != nil {
				return b.src.errAt(v.off, path+".args.tools", err.Error(), nil)
			}
			b.rec.Tools = specs
		}
	case action == "message" && e.Source == "user":
		b.msgs++
		b.rec.Turns = append(b.rec.Turns, &Turn{Input: args.Content})
	case action != "":
		if e.Source != "agent" || action == "change_agent_state" || action == "recall" || action == "null" {
			return nil
		}
		return b.addAction(v, e, action, args)
	case observation != "":
		b.addObservation(v, e, observation)
	}
	return nil
}

// addAction adds an agent's action: to the call of its model response, or
// as a call of its own.
func (b *ohBuilder) addAction(v rawValue, e *ohEvent, action string, args ohArgs) error {
	meta := e.ToolCallMeta
	if meta != nil && meta.ModelResponse != nil && meta.ModelResponse.ID != "" {
		mr := meta.ModelResponse
		if b.calls[mr.ID] == nil {
			c := b.newCall(v)
			b.calls[mr.ID] = c
			if len(mr.Choices) > 0 {
				m := mr.Choices[0].Message
				if text, _, err := chatContent(m.Content); err == nil && text != "" {
					c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(text))
				}
				for _, tc := range m.ToolCalls {
					a, err := callArgs(tc.Function.Arguments)
					if err != nil {
						a = json.RawMessage("{}")
					}
					c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: a})
					b.byID[tc.ID] = c
				}
			}
			if mr.Usage != nil {
				c.Usage, c.HasUsage, b.usage = mr.Usage.Usage(), true, true
			}
			if b.rec.Model == "" {
				b.rec.Model = mr.Model
			}
		}
		b.byEvent[string(e.ID)] = meta.ToolCallID
		return nil
	}
	// No model response: the action is a call of its own.
	b.noMeta++
	c := b.newCall(v)
	if action == "message" {
		c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(args.Content))
		return nil
	}
	if args.Thought != "" {
		c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(args.Thought))
	}
	id := "oh_" + strings.Trim(string(e.ID), `"`)
	c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: action, Args: compactJSON(e.Args)})
	b.byID[id] = c
	b.byEvent[string(e.ID)] = id
	return nil
}

// newCall starts the call of a new model response in the last turn.
func (b *ohBuilder) newCall(v rawValue) *Call {
	if len(b.rec.Turns) == 0 {
		b.rec.Turns = append(b.rec.Turns, &Turn{})
	}
	t := b.rec.Turns[len(b.rec.Turns)-1]
	b.msgs++
	c := &Call{Request: b.msgs - 1, Offset: v.off, Assistant: harness.Message{Role: harness.RoleAssistant}}
	t.Calls = append(t.Calls, c)
	return c
}

// addObservation pairs an observation with the tool call of the action
// that caused it (by tool_call_metadata, else by its cause).
func (b *ohBuilder) addObservation(v rawValue, e *ohEvent, observation string) {
	if observation == "recall" {
		b.recalls++
		return
	}
	id := ""
	switch {
	case e.ToolCallMeta != nil && e.ToolCallMeta.ToolCallID != "":
		id = e.ToolCallMeta.ToolCallID
	case len(e.Cause) > 0:
		id = b.byEvent[string(e.Cause)]
	}
	if b.byID[id] == nil {
		if observation != "agent_state_changed" && observation != "null" {
			b.orphans++
		}
		return
	}
	text := ""
	if json.Unmarshal(e.Content, &text) != nil {
		text = string(e.Content)
	}
	isErr := observation == "error" || (e.Success != nil && !*e.Success) || (e.Extras.ExitCode != nil && *e.Extras.ExitCode != 0)
	b.answer(v, id, text, isErr)
}

// answer adds text as the result of tool call id, waiting in byID.
func (b *ohBuilder) answer(v rawValue, id, text string, isErr bool) {
	c := b.byID[id]
	if c == nil {
		b.orphans++
		return
	}
	delete(b.byID, id)
	b.msgs++
	c.addResult(textResult(id, text, isErr, v.off))
}

// warnings says what the events do not record and what was left out.
func (b *ohBuilder) warnings() []string {
	var w []string
	if s := notRecorded(formatOpenHands, b.rec.System == "", len(b.rec.Tools) == 0); s != "" {
		w = append(w, s)
	}
	if b.noMeta > 0 {
		w = append(w, fmt.Sprintf("%d actions carry no model response (tool_call_metadata): each is counted as a model call of its own, its arguments as the call", b.noMeta))
	}
	if b.condensed > 0 {
		w = append(w, fmt.Sprintf("%d condensations of the history by OpenHands: the events keep every step, so later requests are counted whole, longer than OpenHands sent them", b.condensed))
	}
	if b.recalls > 0 {
		w = append(w, fmt.Sprintf("%d recall observations (knowledge OpenHands adds to the prompt) left out", b.recalls))
	}
	if b.orphans > 0 {
		w = append(w, fmt.Sprintf("%d observations answer no action recorded before them: left out", b.orphans))
	}
	if !b.usage {
		w = append(w, "no usage recorded (no model_response in tool_call_metadata)")
	}
	return w
}

// addSDK reads one event of the agent SDK: the system prompt and tools, a
// user's or the agent's message, an action (the ActionEvents of one
// llm_response_id are one call), an observation, a rejection or an error
// answering its tool call.
func (b *ohBuilder) addSDK(v rawValue, path string, e *ohEvent) error {
	switch e.Kind {
	case "SystemPromptEvent":
		if e.SystemPrompt != nil {
			b.rec.System = e.SystemPrompt.Text
		}
		if specs, err := ParseToolSpecs(e.Tools); err == nil {
			b.rec.Tools = specs
		}
	case "MessageEvent":
		if e.LLMMessage == nil {
			return nil
		}
		text := ohText(e.LLMMessage.Content)
		if e.Source == "user" {
			b.msgs++
			b.rec.Turns = append(b.rec.Turns, &Turn{Input: text})
			return nil
		}
		c := b.newCall(v)
		c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(text))
	case "ActionEvent":
		if e.ToolCall == nil {
			return b.src.errAt(v.off, path, "an ActionEvent without its tool_call", nil)
		}
		c := b.calls[e.LLMResponseID]
		if c == nil || e.LLMResponseID == "" {
			c = b.newCall(v)
			b.calls[e.LLMResponseID] = c
			if text := ohText(e.Thought); text != "" {
				c.Assistant.Parts = append(c.Assistant.Parts, harness.TextPart(text))
			}
		}
		args, err := callArgs(e.ToolCall.Arguments)
		if err != nil {
			return b.src.errAt(v.off, path+".tool_call.arguments", err.Error(), nil)
		}
		c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: e.ToolCall.ID, Name: e.ToolCall.Name, Args: args})
		b.byID[e.ToolCall.ID] = c
	case "ObservationEvent":
		text, isErr := ohSDKObservation(e.Observation)
		b.answer(v, e.ToolCallID, text, isErr)
	case "UserRejectObservation":
		b.answer(v, e.ToolCallID, "Action rejected: "+e.RejectionReason, true)
	case "AgentErrorEvent":
		b.answer(v, e.ToolCallID, e.Error, true)
	case "Condensation", "CondensationSummaryEvent":
		b.condensed++
	}
	return nil
}

// ohSDKObservation reads the text of an SDK observation, whose shape is
// its tool's: its content blocks (or a string), else its output; and
// whether it reports an error.
func ohSDKObservation(raw json.RawMessage) (string, bool) {
	var o struct {
		Content json.RawMessage `json:"content"`
		Output  string          `json:"output"`
		Error   string          `json:"error"`
		IsError bool            `json:"is_error"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "", false
	}
	text := ohText(o.Content)
	if text == "" {
		text = o.Output
	}
	if text == "" {
		text = o.Error
	}
	return text, o.IsError || o.Error != ""
}

// ohText is the text of SDK content: a string, or the text of its text
// blocks (images and other blocks left out).
func ohText(raw json.RawMessage) string {
	if s := jsonString(raw); s != "" {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var texts []string
	for _, bl := range blocks {
		if bl.Type == "text" || bl.Type == "" {
			texts = append(texts, bl.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// ohEvalModel is the model an evaluation's metadata names
// (llm_config.model in OpenHands's EvalMetadata), "" when it names none.
func ohEvalModel(raw json.RawMessage) string {
	var m struct {
		LLMConfig struct {
			Model string `json:"model"`
		} `json:"llm_config"`
	}
	json.Unmarshal(raw, &m)
	return m.LLMConfig.Model
}

package replay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/anthropic"
	"github.com/agentharness/harness/internal/wire/openai"
)

// chatMessage is one OpenAI chat message as recorded, with the fields
// mini-swe-agent adds under "extra".
type chatMessage struct {
	openai.ChatMessage
	// Usage is not part of the chat format; some recorders put the
	// response's usage beside the assistant message.
	Usage *chatUsage `json:"usage"`
	Extra *chatExtra `json:"extra"`
}

// chatUsage is a response's usage as recorders put it beside a message:
// OpenAI's fields (prompt_tokens …) or Anthropic's (input_tokens …).
type chatUsage struct {
	openai.ChatUsage
	Anthropic anthropic.Usage `json:"-"`
}

// UnmarshalJSON reads both shapes of usage from one object.
func (u *chatUsage) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &u.ChatUsage); err != nil {
		return err
	}
	return json.Unmarshal(data, &u.Anthropic)
}

// harness returns u as harness counts it: Anthropic's fields when any is
// set, else OpenAI's.
func (u *chatUsage) harness() harness.Usage {
	if u.Anthropic != (anthropic.Usage{}) {
		return u.Anthropic.Usage()
	}
	return u.ChatUsage.Usage()
}

// chatExtra is what mini-swe-agent records beside a message: a reply's
// parsed actions and the response it came in, an observation's raw output,
// a format error's reply (mini-swe-agent 2 stores no assistant message for
// a reply it could not parse).
type chatExtra struct {
	RawOutput     *string `json:"raw_output"`
	Returncode    *int    `json:"returncode"`
	ExceptionInfo string  `json:"exception_info"`
	Response      *struct {
		Model string            `json:"model"`
		Usage *openai.ChatUsage `json:"usage"`
	} `json:"response"`
	Actions []struct {
		Command    string `json:"command"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"actions"`
	ModelResponse string `json:"model_response"`
}

// chatBuilder turns a sequence of chat messages into a Recording.
type chatBuilder struct {
	src *source
	rec *Recording
	// miniSWE enables mini-swe-agent's extras: raw outputs and the "exit"
	// role.
	miniSWE bool
	// pending maps an unanswered tool call id to the call that made it.
	pending map[string]*Call
	index   int // messages seen, for Call.Request
	// thinking and images count the Anthropic content blocks left out:
	// an assistant's thinking, a user message's images and documents.
	thinking, images int
	// textAction is a mini-swe-agent reply's text action (its one ```bash
	// block, recorded as a bash call) waiting for the observation the next
	// user message holds; textActions counts them.
	textAction  *Call
	textActions int
	// unparsed counts the replies only a format error records.
	unparsed int
}

func newChatBuilder(src *source, format string) *chatBuilder {
	return &chatBuilder{
		src:     src,
		rec:     &Recording{Source: src.name, Format: format},
		miniSWE: format == formatMiniSWE,
		pending: map[string]*Call{},
	}
}

// add appends one message found at v.
func (b *chatBuilder) add(v rawValue, path string) error {
	var m chatMessage
	if err := b.src.decodeAt(v, path, &m); err != nil {
		return err
	}
	defer func() { b.index++ }()
	if blocks, ok := anthropicBlocks(m.Content); ok {
		b.rec.Format = formatAnthropic
		return b.addBlocks(v, path, &m, blocks)
	}
	text, parts, err := chatContent(m.Content)
	if err != nil {
		return b.src.errAt(v.off, path+".content", err.Error(), nil)
	}
	switch m.Role {
	case "system", "developer":
		if len(b.rec.Turns) == 0 {
			if b.rec.System != "" {
				b.rec.System += "\n\n"
			}
			b.rec.System += text
			return nil
		}
		// A system message in mid-run is shown to the model like a user
		// input; harness has no other place for it.
		b.rec.Turns = append(b.rec.Turns, &Turn{Input: text})
	case "user":
		if c := b.textAction; c != nil {
			b.textAction = nil
			r, err := b.addResult(v, path, c.Assistant.ToolCalls[0].ID, text, parts)
			if err == nil {
				b.miniSWEOutput(r, text, m.Extra)
			}
			return err
		}
		if b.miniSWE && m.Extra != nil && m.Extra.ModelResponse != "" {
			b.unparsedReply(v, m.Extra.ModelResponse)
		}
		b.rec.Turns = append(b.rec.Turns, &Turn{Input: text})
	case "assistant":
		b.textAction = nil
		return b.addAssistant(v, path, &m, parts)
	case "tool":
		return b.addTool(v, path, &m, text, parts)
	case "exit":
		if !b.miniSWE {
			return b.src.errAt(v.off, path+".role", `role "exit" is mini-swe-agent's; this file is not a trajectory`, nil)
		}
		// mini-swe-agent's record of the submission: never sent to a model.
	default:
		return b.src.errAt(v.off, path+".role", fmt.Sprintf("unknown role %q (want system, user, assistant or tool)", m.Role), nil)
	}
	return nil
}

// addAssistant appends assistant message m (content parts, found at v) as
// the next call of the last turn, its tool calls waiting for their results.
func (b *chatBuilder) addAssistant(v rawValue, path string, m *chatMessage, parts []harness.Part) error {
	t := b.lastTurn()
	c := &Call{Request: b.index, Offset: v.off}
	c.Assistant = harness.Message{Role: harness.RoleAssistant, Parts: parts}
	for i, tc := range m.ToolCalls {
		args, err := callArgs(tc.Function.Arguments)
		if err != nil {
			return b.src.errAt(v.off, fmt.Sprintf("%s.tool_calls[%d].function.arguments", path, i), err.Error(), nil)
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_m%d_%d", b.index, i+1)
		}
		if _, dup := b.pending[tc.ID]; dup {
			return b.src.errAt(v.off, fmt.Sprintf("%s.tool_calls[%d].id", path, i), fmt.Sprintf("tool call id %q is already waiting for its result", tc.ID), nil)
		}
		c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		b.pending[tc.ID] = c
	}
	if b.miniSWE && len(m.ToolCalls) == 0 {
		b.textCall(c, harness.Message{Parts: parts}.Text(), m.Extra)
	}
	switch {
	case m.Extra != nil && m.Extra.Response != nil && m.Extra.Response.Usage != nil:
		c.Usage, c.HasUsage = m.Extra.Response.Usage.Usage(), true
	case m.Usage != nil:
		c.Usage, c.HasUsage = m.Usage.harness(), true
	}
	if b.rec.Model == "" && m.Extra != nil && m.Extra.Response != nil {
		b.rec.Model = m.Extra.Response.Model
	}
	t.Calls = append(t.Calls, c)
	return nil
}

// miniSWEAction is how mini-swe-agent without tool calls finds the action
// in a reply when the trajectory does not list it: a ```bash block
// (version 1), a ```mswea_bash_command block or a <mswea_bash_command>
// element (version 2's text and XML configurations); it runs the reply's
// only one.
var miniSWEAction = regexp.MustCompile("(?s)```(?:bash|mswea_bash_command)\\s*\\n(.*?)\\n```|<mswea_bash_command>(.*?)</mswea_bash_command>")

// textCall records the action of a mini-swe-agent reply without tool calls
// as a call of its bash tool on c, answered by the next user message: the
// one command extra lists (version 2 parses it with the run's own pattern),
// else the reply's one action block.
func (b *chatBuilder) textCall(c *Call, text string, extra *chatExtra) {
	var command string
	switch {
	case extra != nil && len(extra.Actions) == 1 && extra.Actions[0].ToolCallID == "":
		command = extra.Actions[0].Command
	case extra != nil && len(extra.Actions) > 1:
		return
	default:
		m := miniSWEAction.FindAllStringSubmatch(text, -1)
		if len(m) != 1 {
			return // the agent answers with a format error, not an observation
		}
		command = m[0][1] + m[0][2]
	}
	args, _ := json.Marshal(map[string]string{"command": strings.TrimSpace(command)})
	id := fmt.Sprintf("mini_%d", b.index)
	c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: miniSWEBash.Name, Args: args})
	b.pending[id] = c
	b.textAction = c
	b.textActions++
}

// lastTurn is the turn a call goes to: the last one, or a first one with
// no input when no user message came before.
func (b *chatBuilder) lastTurn() *Turn {
	if len(b.rec.Turns) == 0 {
		b.rec.Turns = append(b.rec.Turns, &Turn{})
	}
	return b.rec.Turns[len(b.rec.Turns)-1]
}

// unparsedReply records the reply a mini-swe-agent 2 format error quotes
// (found at v) as the model call it was: the agent stores no assistant
// message for a reply it could not parse, but the request was sent.
func (b *chatBuilder) unparsedReply(v rawValue, reply string) {
	t := b.lastTurn()
	c := &Call{Request: b.index, Offset: v.off, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(reply)}}}
	t.Calls = append(t.Calls, c)
	b.unparsed++
}

// addTool pairs tool message m (text and parts, found at v) with the call
// waiting for it; a mini-swe-agent trajectory's raw output is its full
// text.
func (b *chatBuilder) addTool(v rawValue, path string, m *chatMessage, text string, parts []harness.Part) error {
	r, err := b.addResult(v, path+".tool_call_id", m.ToolCallID, text, parts)
	if err != nil {
		return err
	}
	if b.miniSWE {
		b.miniSWEOutput(r, text, m.Extra)
	}
	return nil
}

// miniSWEOutput completes result r of a mini-swe-agent observation shown
// as text from what extra recorded: the command's whole output, and an
// exception as an error.
func (b *chatBuilder) miniSWEOutput(r *Result, text string, extra *chatExtra) {
	if extra == nil {
		return
	}
	if extra.RawOutput != nil {
		r.Full = []harness.Part{harness.TextPart(miniSWEFull(text, *extra.RawOutput))}
	}
	r.IsError = extra.ExceptionInfo != ""
}

// addResult pairs the result of call id (text and parts, found at v) with
// the call waiting for it.
func (b *chatBuilder) addResult(v rawValue, path, id, text string, parts []harness.Part) (*Result, error) {
	c, ok := b.pending[id]
	if !ok {
		return nil, b.src.errAt(v.off, path, fmt.Sprintf("tool message answers %q, which no earlier assistant message called (or which was already answered)", id), nil)
	}
	delete(b.pending, id)
	r := &Result{CallID: id, Shown: text, Full: parts, Offset: v.off}
	c.addResult(r)
	return r, nil
}

// chatContent reads a message's content: a string, null, or an array of
// content parts ({"type":"text","text":…}, {"type":"image_url",…}).
func chatContent(raw json.RawMessage) (string, []harness.Part, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return "", nil, nil
		}
		return s, []harness.Part{harness.TextPart(s)}, nil
	}
	var items []openai.ContentPart
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", nil, fmt.Errorf("content is neither a string nor an array of content parts")
	}
	var parts []harness.Part
	for _, it := range items {
		switch it.Type {
		case "text", "input_text", "output_text":
			parts = append(parts, harness.TextPart(it.Text))
		case "image_url":
			parts = append(parts, imagePart(it.ImageURL))
		default:
			return "", nil, fmt.Errorf("content part of unknown type %q", it.Type)
		}
	}
	return harness.Message{Parts: parts}.Text(), parts, nil
}

// imagePart decodes a data: URL; an image known only by its URL is kept
// without bytes (token counting then uses its fallback size).
func imagePart(u *struct {
	URL string `json:"url"`
}) harness.Part {
	if u == nil {
		return harness.ImagePart("image/*", nil)
	}
	if rest, ok := strings.CutPrefix(u.URL, "data:"); ok {
		mime, data, ok := strings.Cut(rest, ";base64,")
		if b, err := base64.StdEncoding.DecodeString(data); ok && err == nil {
			return harness.ImagePart(mime, b)
		}
	}
	return harness.ImagePart("image/*", nil)
}

// callArgs returns a call's arguments: the content of the JSON string the
// chat format uses, or an object kept as it is.
func callArgs(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return json.RawMessage(s), nil
	}
	if raw[0] == '{' {
		return raw, nil
	}
	return nil, fmt.Errorf("arguments are neither a JSON string nor an object")
}

// miniSWEFull is the full observation of a mini-swe-agent step. The agent
// shows "<returncode>N</returncode>\n<output>\nOUT</output>" when OUT is
// under 10,000 characters; above that it shows a warning and OUT's head
// and tail. The full observation is the short form with the whole raw
// output: the shown text when it already holds the raw output, otherwise
// the shown text's prefix up to the warning followed by the raw output in
// <output> tags.
func miniSWEFull(shown, raw string) string {
	if strings.Contains(shown, raw) {
		return shown
	}
	if i := strings.Index(shown, "<warning>"); i >= 0 {
		return shown[:i] + "<output>\n" + raw + "</output>"
	}
	return raw
}

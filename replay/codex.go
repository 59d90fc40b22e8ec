package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/openai"
)

// formatCodex is an OpenAI Codex CLI rollout.
const formatCodex = "codex"

// cxLine is one line of a rollout: {timestamp, type, payload} since Codex
// 0.4x, or the bare item in the rollouts of earlier versions.
type cxLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// cxItem is a response item, an event or the session's metadata (the
// fields of all three; each kind uses some).
type cxItem struct {
	openai.Item
	Message string `json:"message"`
	// session_meta (and the first line of older rollouts)
	ID               string `json:"id"`
	CLIVersion       string `json:"cli_version"`
	BaseInstructions *struct {
		Text string `json:"text"`
	} `json:"base_instructions"`
	// turn_context
	Model string `json:"model"`
	// token_count
	Info *struct {
		Total cxUsage `json:"total_token_usage"`
		Last  cxUsage `json:"last_token_usage"`
	} `json:"info"`
}

type cxUsage struct {
	Input  int `json:"input_tokens"`
	Cached int `json:"cached_input_tokens"`
	Output int `json:"output_tokens"`
	Total  int `json:"total_tokens"`
}

// cxBuilder builds the recordings of one rollout.
type cxBuilder struct {
	recs    []*Recording
	rec     *Recording
	call    *Call // the response being read; nil after a user message or a tool output
	billed  *Call // the newest call no token_count has been attached to
	pending map[string]*Call
	msgs    int
	lastTot int
	now     time.Time // the line being read's timestamp (zero when none)
	fold    turnFold
	// counts for the warnings
	agentCut, orphans, server, reasoning int
	usage                                bool
	system                               string
	session, version                     string
	// format is the recordings' format: formatCodex (the zero value) or
	// formatResponses for a Responses input list read as a rollout is.
	format string
}

// parseCodex imports a Codex CLI rollout (rollout-*.jsonl, as Codex writes
// them under ~/.codex/sessions/YYYY/MM/DD/). It returns the rollout's first
// model context; parseCodexAll returns one per compaction.
func parseCodex(name string, data []byte) (*Recording, error) {
	recs, err := parseCodexAll(name, data)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// parseCodexAll imports a Codex CLI rollout, both layouts: the {timestamp,
// type, payload} lines of Codex 0.4x and later (session_meta,
// response_item, event_msg, turn_context, compacted) and the bare response
// items of earlier versions. Response items are the conversation: a user
// message is a turn's prompt, and the messages Codex adds itself (see
// clientctx.Codex: developer messages, AGENTS.md, the environment, a skill's
// text) are the context of the prompt they precede, or follow before the
// first response (Turn.Context), sent where they were; the items of one
// response (reasoning, assistant message, function_call, custom_tool_call,
// local_shell_call) are one Call, whose usage is the last_token_usage of
// the token_count event that follows it (repeated events with unchanged
// totals are ignored); function_call_output and custom_tool_call_output
// answer calls by call_id, so parallel calls pair as they ran. Outputs are
// what Codex showed the model: Codex already cut long ones to head and tail
// ("…N tokens truncated…"), and the rest is not recorded; a warning counts
// them. A compacted line starts a new recording that begins with its
// summary (the next prompt's context). The system prompt is recorded only
// by Codex versions that write base_instructions; the tool schemas never
// are (see Supply).
func parseCodexAll(name string, data []byte) ([]*Recording, error) {
	if f, ok := firstRecord(data); ok && isCodexExec(f) {
		rec, err := parseCodexExec(name, data)
		if err != nil {
			return nil, err
		}
		return []*Recording{rec}, nil
	}
	src := &source{name: name, data: data}
	return parseCodexEach(src, records(src))
}

// parseCodexEach is parseCodexAll over the lines each passes one at a
// time: each is decoded and dropped, so memory holds one line beyond what
// the recordings keep.
func parseCodexEach(src *source, each recordIter) ([]*Recording, error) {
	name := src.name
	b := &cxBuilder{}
	b.start()
	partial, err := each(func(v rawValue, path string) error {
		var l cxLine
		if err := src.decodeAt(v, path, &l); err != nil {
			return err
		}
		kind, raw := l.Type, l.Payload
		if len(raw) == 0 {
			kind, raw = "", v.raw // an item of an older rollout
		}
		var it cxItem
		if err := src.decodeAt(rawValue{raw: raw, off: v.off}, path, &it); err != nil {
			return err
		}
		b.now = parseStamp(l.Timestamp)
		return b.add(src, v.off, path, kind, &it)
	})
	if err != nil {
		return nil, err
	}
	b.fold.end(b.rec)
	var out []*Recording
	for _, r := range b.recs {
		if r.Calls() > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, src.errAt(0, "", "no response item from the model", ErrNoModelCall)
	}
	if b.session == "" {
		b.session = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	for i, r := range out {
		r.ID, r.Source = b.session, name
		if len(out) > 1 {
			r.ID = fmt.Sprintf("%s/part-%d", b.session, i+1)
		}
		r.System = b.system
		r.Warnings = b.warnings(i, len(out), partial)
	}
	return out, nil
}

// start begins a new model context (the rollout's start, or a compaction).
func (b *cxBuilder) start() {
	if b.rec != nil {
		b.fold.end(b.rec)
	}
	b.rec = &Recording{Format: formatCodex}
	if b.format != "" {
		b.rec.Format = b.format
	}
	if len(b.recs) > 0 {
		b.rec.Model = b.recs[len(b.recs)-1].Model
	}
	b.recs = append(b.recs, b.rec)
	b.call, b.billed, b.pending, b.msgs = nil, nil, map[string]*Call{}, 0
}

// add reads one rollout line: a session or turn record, a token count, or
// a response item of the model context being built.
func (b *cxBuilder) add(src *source, off int64, path, kind string, it *cxItem) error {
	switch kind {
	case "", "response_item":
	default:
		b.addEvent(kind, it)
		return nil
	}
	if kind == "" && it.Type == "" && it.ID != "" {
		b.session = it.ID // the first line of an older rollout
		return nil
	}
	return b.addItem(src, off, path, it)
}

// addEvent reads a line that is not a response item: the session's
// metadata, the model of a turn, a compaction (a new model context) or the
// token count that bills the last response.
func (b *cxBuilder) addEvent(kind string, it *cxItem) {
	switch kind {
	case "session_meta":
		b.session, b.version = it.ID, it.CLIVersion
		if it.BaseInstructions != nil {
			b.system = it.BaseInstructions.Text
		}
	case "turn_context":
		if it.Model != "" {
			b.rec.Model = it.Model
		}
	case "compacted":
		// The summary leads the next prompt as Codex's own context does.
		b.start()
		b.fold.input(b.rec, it.Message, true)
	case "event_msg":
		if it.Type == "token_count" && it.Info != nil && it.Info.Total.Total != b.lastTot {
			b.lastTot = it.Info.Total.Total
			if c := b.billed; c != nil {
				u := it.Info.Last
				c.Usage, c.HasUsage = harness.Usage{Input: u.Input, Cached: u.Cached, Output: u.Output}, true
				b.usage = true
				b.billed, b.call = nil, nil
			}
		}
	}
}

// addItem reads one response item: a message, a reasoning block, a tool
// call or its output, a server-side search.
func (b *cxBuilder) addItem(src *source, off int64, path string, it *cxItem) error {
	switch it.Type {
	case "message":
		text, parts, err := chatContent(it.Content)
		if err != nil {
			return src.errAt(off, path+".content", err.Error(), nil)
		}
		if it.Role != "assistant" {
			b.msgs++
			b.fold.input(b.rec, text, clientctx.Codex(it.Role, text))
			b.call = nil
			return nil
		}
		c := b.response(off)
		c.Assistant.Parts = append(c.Assistant.Parts, parts...)
	case "reasoning":
		b.response(off)
		b.reasoning++
	case "function_call", "custom_tool_call", "local_shell_call":
		return b.addCall(src, off, path, it)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		b.result(off, it)
	case "web_search_call":
		b.response(off)
		b.server++
	}
	return nil
}

// addCall adds a tool call item to the current response, its arguments
// as the model sent them (a custom tool's input wrapped as {"input": …}).
func (b *cxBuilder) addCall(src *source, off int64, path string, it *cxItem) error {
	args := it.Arguments
	switch it.Type {
	case "custom_tool_call":
		a, _ := json.Marshal(map[string]json.RawMessage{"input": it.Input})
		args = a
	case "local_shell_call":
		args = it.Action
	}
	args, err := callArgs(args)
	if err != nil {
		return src.errAt(off, path+".arguments", err.Error(), nil)
	}
	c := b.response(off)
	id := it.CallID
	if id == "" {
		id = fmt.Sprintf("call_r%d_%d", b.msgs, len(c.Assistant.ToolCalls)+1)
	}
	c.Assistant.ToolCalls = append(c.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: it.Name, Args: args})
	b.pending[id] = c
	return nil
}

// response returns the call the current response's items go to.
func (b *cxBuilder) response(off int64) *Call {
	if b.call != nil {
		return b.call
	}
	t := b.fold.call(b.rec)
	b.msgs++
	c := &Call{Request: b.msgs - 1, Offset: off, Assistant: harness.Message{Role: harness.RoleAssistant}, Time: b.now}
	t.Calls = append(t.Calls, c)
	b.call, b.billed = c, c
	return c
}

func (b *cxBuilder) result(off int64, it *cxItem) {
	b.call = nil
	c, ok := b.pending[it.CallID]
	if !ok {
		b.orphans++
		return
	}
	delete(b.pending, it.CallID)
	b.msgs++
	text, isErr := cxOutput(it.Output)
	if strings.Contains(text, " tokens truncated…") || strings.Contains(text, "output truncated to fit") {
		b.agentCut++
	}
	c.addResult(textResult(it.CallID, text, isErr, off))
}

// cxOutput reads a tool output: a string, or {content, success} (the
// function-call output payload), or content items.
func cxOutput(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var o struct {
		Content json.RawMessage `json:"content"`
		Success *bool           `json:"success"`
	}
	if json.Unmarshal(raw, &o) == nil && len(o.Content) > 0 {
		text, _ := cxOutput(o.Content)
		return text, o.Success != nil && !*o.Success
	}
	if text, _, err := chatContent(raw); err == nil {
		return text, false
	}
	return string(raw), false
}

func (b *cxBuilder) warnings(part, parts int, partial bool) []string {
	if b.format == formatResponses {
		return b.listWarnings(partial)
	}
	w := []string{notRecorded(formatCodex, b.system == "", true)}
	if parts > 1 {
		w = append(w, fmt.Sprintf("the rollout was compacted: this is part %d of %d, each after a compaction starting from its summary as Codex's requests did", part+1, parts))
	}
	if b.agentCut > 0 {
		w = append(w, fmt.Sprintf("%d outputs in this rollout were cut by Codex itself (head and tail kept, \"…N tokens truncated…\"): recorded as the model saw them; the rest of each is not recorded", b.agentCut))
	}
	if b.server > 0 {
		w = append(w, fmt.Sprintf("%d web searches ran on the provider's side: their results are not recorded", b.server))
	}
	if b.orphans > 0 {
		w = append(w, fmt.Sprintf("%d tool outputs answer no call recorded in the same context: left out", b.orphans))
	}
	if b.reasoning > 0 {
		w = append(w, fmt.Sprintf("%d reasoning items left out (encrypted or summarised; their tokens are in the recorded usage)", b.reasoning))
	}
	if !b.usage {
		w = append(w, "no usage recorded (no token_count events)")
	}
	if partial {
		w = append(w, incompleteLine("rollout"))
	}
	return w
}

// listWarnings are a Responses input list's warnings: what it does not
// record, what was left out.
func (b *cxBuilder) listWarnings(partial bool) []string {
	var w []string
	if s := notRecorded(formatResponses, b.system == "", len(b.rec.Tools) == 0); s != "" {
		w = append(w, s)
	}
	if b.server > 0 {
		w = append(w, fmt.Sprintf("%d web searches ran on the provider's side: their results are not recorded", b.server))
	}
	if b.orphans > 0 {
		w = append(w, fmt.Sprintf("%d tool outputs answer no call recorded in the same list: left out", b.orphans))
	}
	if b.reasoning > 0 {
		w = append(w, fmt.Sprintf("%d reasoning items left out (encrypted or summarised)", b.reasoning))
	}
	if partial {
		w = append(w, incompleteLine("file"))
	}
	return w
}

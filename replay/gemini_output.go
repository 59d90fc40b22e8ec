package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentharness/harness"
)

// gemStreamEvent is one line of Gemini CLI's `--output-format stream-json`
// output: init (session_id, model), message (role user or assistant,
// content; delta when an assistant's text comes in pieces), tool_use
// (tool_name, tool_id, parameters), tool_result (tool_id, status, output,
// error), error (severity, message) and result (status, error, stats).
type gemStreamEvent struct {
	Type       string          `json:"type"`
	Timestamp  string          `json:"timestamp"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     *string         `json:"output"`
	Error      *gemOutputError `json:"error"`
	Message    string          `json:"message"`
	Stats      json.RawMessage `json:"stats"`
}

// gemOutputError is the error of a tool result or a run.
type gemOutputError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// gemStreamLacks is what a stream-json output does not record, the one
// warning of such a file beside notRecorded's.
const gemStreamLacks = "Gemini CLI's stream-json output records the prompt, the calls, their results and the answer's text, " +
	"but not the context Gemini CLI sends before the prompt (environment, memory), thoughts, or each request's usage " +
	"(only the run's totals): the session's chat recording (~/.gemini/tmp/<project>/chats/session-*.jsonl) records them"

// gemIsStream reports whether data is a stream-json output: its first
// record is the init event.
func gemIsStream(f map[string]json.RawMessage) bool {
	return jsonString(f["type"]) == "init" && has(f, "session_id")
}

// gemIsOutput reports whether data is a `--output-format json` output:
// one object with the session's id and its answer, stats or error.
func gemIsOutput(f map[string]json.RawMessage) bool {
	return has(f, "session_id") && !has(f, "type") && (has(f, "response") || has(f, "stats") || has(f, "error"))
}

// streamOutput reads a stream-json output. A user message is a turn's
// prompt; the assistant's text and tool calls up to the next tool result
// are one model call; a tool result answers the call of its tool_id.
func (b *gemBuilder) streamOutput(each recordIter) error {
	st := &gemStream{names: map[string]string{}}
	partial, err := each(func(v rawValue, path string) error { return b.streamEvent(st, v, path) })
	if err != nil {
		return err
	}
	b.rec.Warnings = append(b.rec.Warnings, gemStreamLacks)
	if st.errs > 0 {
		b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf("%d errors reported by Gemini CLI (error events or a failed result)", st.errs))
	}
	if partial {
		b.rec.Warnings = append(b.rec.Warnings, incompleteLine("output"))
	}
	return nil
}

// gemStream is the state of a stream-json output being read.
type gemStream struct {
	cur      *Call
	answered bool // a tool result came after cur: the next output is a new call
	names    map[string]string
	errs     int
}

// streamEvent reads one event of a stream-json output.
func (b *gemBuilder) streamEvent(st *gemStream, v rawValue, path string) error {
	var e gemStreamEvent
	if err := b.src.decodeAt(v, path, &e); err != nil {
		return err
	}
	switch e.Type {
	case "init":
		if e.SessionID != "" {
			b.rec.ID = e.SessionID
		}
		if e.Model != "auto" {
			b.rec.Model = e.Model
		}
	case "message":
		if e.Role == "user" {
			b.n++
			b.fold.input(b.rec, e.Content, false)
			st.cur = nil
			return nil
		}
		if e.Role != "assistant" {
			return b.src.errAt(v.off, path+".role", fmt.Sprintf("unknown role %q", e.Role), nil)
		}
		st.cur, st.answered = b.streamCall(st.cur, st.answered, v.off, e.Timestamp)
		cur := st.cur
		if n := len(cur.Assistant.Parts); n > 0 && cur.Assistant.Parts[n-1].Type == harness.PartText {
			cur.Assistant.Parts[n-1].Text += e.Content
		} else if e.Content != "" {
			cur.Assistant.Parts = append(cur.Assistant.Parts, harness.TextPart(e.Content))
		}
	case "tool_use":
		st.cur, st.answered = b.streamCall(st.cur, st.answered, v.off, e.Timestamp)
		st.names[e.ToolID] = e.ToolName
		return b.toolCall(v.off, path+".parameters", st.cur, e.ToolID, e.ToolName, e.Parameters)
	case "tool_result":
		b.n++
		st.answered = true
		b.response(v.off, e.ToolID, st.names[e.ToolID], gemStreamResponse(e))
	case "result":
		if b.rec.Model == "" {
			b.rec.Model = gemMainModel(e.Stats)
		}
		if e.Error != nil {
			st.errs++
		}
	case "error":
		st.errs++
	}
	return nil
}

// streamCall returns the call an assistant event belongs to: cur, or a
// new one when there is none or a tool result came after it.
func (b *gemBuilder) streamCall(cur *Call, answered bool, off int64, stamp string) (*Call, bool) {
	if cur != nil && !answered {
		return cur, false
	}
	b.n++
	c := b.call(off)
	c.Time = parseStamp(stamp)
	return c, false
}

// gemStreamResponse is a tool result as a function response: its output,
// or its error's message.
func gemStreamResponse(e gemStreamEvent) json.RawMessage {
	resp := map[string]string{}
	switch {
	case e.Error != nil && (e.Output == nil || *e.Output == ""):
		resp["error"] = e.Error.Message
	case e.Output != nil:
		resp["output"] = *e.Output
	case e.Status == "error":
		resp["error"] = ""
	default:
		resp["output"] = ""
	}
	raw, _ := json.Marshal(resp)
	return raw
}

// gemMainModel is the model of a run's stats that read the most input
// (the main model, not the router's), or "".
func gemMainModel(stats json.RawMessage) string {
	var s struct {
		Models map[string]struct {
			Input  int `json:"input_tokens"`
			Tokens struct {
				Prompt int `json:"prompt"`
			} `json:"tokens"`
		} `json:"models"`
	}
	if json.Unmarshal(stats, &s) != nil {
		return ""
	}
	names := make([]string, 0, len(s.Models))
	for name := range s.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	best, most := "", -1
	for _, name := range names {
		m := s.Models[name]
		if n := max(m.Input, m.Tokens.Prompt); n > most {
			best, most = name, n
		}
	}
	return best
}

// gemOutputLacks is what a `--output-format json` output does not record.
const gemOutputLacks = "Gemini CLI's json output records only the final answer and the run's token totals: " +
	"not the prompt, the model calls, the tool calls or their results, the system prompt or the tool schemas; " +
	"it is replayed as one call answering an empty prompt, with no evidence. The session's chat recording " +
	"(~/.gemini/tmp/<project>/chats/session-*.jsonl, session %s) records the run"

// jsonOutput reads a `--output-format json` output: {session_id,
// response, stats} or {session_id, error}.
func (b *gemBuilder) jsonOutput() error {
	var o struct {
		SessionID string          `json:"session_id"`
		Response  *string         `json:"response"`
		Stats     json.RawMessage `json:"stats"`
		Error     *gemOutputError `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(b.src.data))
	if err := dec.Decode(&o); err != nil {
		return b.src.errAt(0, "", "not a Gemini CLI json output", err)
	}
	if o.Response == nil {
		msg := "no response"
		if o.Error != nil {
			msg = fmt.Sprintf("no response: the run failed (%s: %s)", o.Error.Type, strings.TrimSpace(o.Error.Message))
		}
		return b.src.errAt(0, "response", msg, ErrNoModelCall)
	}
	if o.SessionID != "" {
		b.rec.ID = o.SessionID
	}
	b.rec.Model = gemMainModel(o.Stats)
	b.n++
	c := b.call(0)
	if *o.Response != "" {
		c.Assistant.Parts = []harness.Part{harness.TextPart(*o.Response)}
	}
	b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf(gemOutputLacks, o.SessionID))
	return nil
}

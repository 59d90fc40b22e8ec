package replay

import (
	"encoding/json"

	"github.com/agentharness/harness/internal/wire/anthropic"
)

// The outputs of Claude Code's print mode (claude -p), as ccCounts.output
// names them.
const (
	ccStreamJSON = "stream-json" // --output-format stream-json --verbose: one event per line
	ccJSON       = "json"        // --output-format json: the result alone
)

// ccOutputEntry are the fields of claude -p's output events that its
// session files spell otherwise (sessionId, toolUseResult) or do not have:
// the subagent a message belongs to (parent_tool_use_id) and a result's
// answer and usage.
type ccOutputEntry struct {
	StreamSession   string           `json:"session_id"`
	ParentToolUseID *string          `json:"parent_tool_use_id"`
	StreamResult    json.RawMessage  `json:"tool_use_result"`
	Result          *string          `json:"result"`
	Usage           *anthropic.Usage `json:"usage"`
}

// isCCOutput reports whether a record is claude -p's output: an event of
// its stream-json output, or its json output's result.
func isCCOutput(f map[string]json.RawMessage) bool {
	switch jsonString(f["type"]) {
	case "system", "assistant", "user":
		return has(f, "session_id") && (has(f, "parent_tool_use_id") || has(f, "subtype"))
	case "result":
		return has(f, "session_id") && has(f, "result")
	}
	return false
}

// outputEntry maps an event of claude -p's output onto a session entry: its
// session id, the tool result's details, and for a subagent's message (one
// with a parent_tool_use_id) a sidechain named by that call, each message
// linked to the one before it; the json output's result becomes the
// answer it reports. A session file's entries pass unchanged.
func (f *ccFile) outputEntry(e *ccEntry) {
	o := &e.ccOutputEntry
	if e.SessionID != "" || o.StreamSession == "" {
		return
	}
	e.SessionID = o.StreamSession
	if f.counts.output == "" {
		f.counts.output = ccStreamJSON
	}
	if len(e.ToolUseResult) == 0 {
		e.ToolUseResult = o.StreamResult
	}
	if o.ParentToolUseID != nil && *o.ParentToolUseID != "" {
		if f.streamLast == nil {
			f.streamLast = map[string]string{}
		}
		e.IsSidechain, e.AgentID = true, *o.ParentToolUseID
		e.ParentUUID = f.streamLast[*o.ParentToolUseID]
		f.streamLast[*o.ParentToolUseID] = e.UUID
	}
	if e.Type == "result" && o.Result != nil && f.runs == nil {
		// The json output: the answer is all it records of the run.
		f.counts.output = ccJSON
		e.Type = "assistant"
		text, _ := json.Marshal([]map[string]string{{"type": "text", "text": *o.Result}})
		e.Message = &anthropic.Message{ID: e.UUID, Role: "assistant", Content: text}
		if o.Usage != nil {
			e.Message.Usage = o.Usage
		}
	}
}

// outputWarning says what claude -p's output does not record.
func outputWarning(output string) string {
	switch output {
	case ccStreamJSON:
		return "Claude Code's stream-json output records the calls and their results, not the prompt (given with -p) the first request carried"
	case ccJSON:
		return "Claude Code's json output records only the final answer and the run's usage: not the prompt, the model calls, the tool calls or their results; bench and audit count one model call (its session file under ~/.claude/projects records them all)"
	}
	return ""
}

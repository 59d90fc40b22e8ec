package store

import "github.com/agentharness/harness"

// Request is what one model request offered beside the transcript: the
// system prompt and the tool schemas it sent. The transcript (turns,
// rounds, results) holds neither, yet both are paid on every request, so a
// replay or an audit of a stored conversation needs them to count what
// the run really sent.
//
// Requests are kept per round, not per turn: a turn's tool selection is
// stable, but its synthesis call sends no schemas (unless the agent keeps
// them on final requests) and a view policy may change the list, so only a
// per-round record is exact. Stores keep each distinct schema, tool list
// and system prompt once (by content hash); a round refers to them, so a
// long conversation offering the same 84 tools in every round stores them
// once.
type Request struct {
	// Turn and Round locate the round this request produced (both from 1).
	Turn  int `json:"turn"`
	Round int `json:"round"`
	// Final is set on a synthesis call (tools withheld).
	Final bool `json:"final,omitempty"`
	// Recorded is false when the store does not know the request: the
	// round was stored before stores recorded requests, or by a recorder
	// that never got it. System and Tools are then empty, though the run
	// may have sent both.
	Recorded bool `json:"recorded"`
	// System is the system prompt sent, "" for none.
	System string `json:"system,omitempty"`
	// Tools are the tool schemas sent, in the order sent, with their Risk.
	// Requests that sent the same list share one slice: treat it as
	// read-only.
	Tools []harness.ToolSpec `json:"tools,omitempty"`
	// ToolSet is the content hash of the list ("" when none was sent):
	// two requests with the same ToolSet sent the same schemas.
	ToolSet string `json:"tool_set,omitempty"`
	// SystemBytes is the size of System; ToolBytes sums
	// each tool's schema as sent to the model (name, description and
	// input schema, as JSON) over Tools.
	SystemBytes int `json:"system_bytes"`
	ToolBytes   int `json:"tool_bytes"`
}

// ToolNames returns the names of the tools the request sent, in order.
func (r *Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

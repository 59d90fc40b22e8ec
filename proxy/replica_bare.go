package proxy

import "github.com/agentharness/harness"

// A decision's claim carries the result without its full content when
// the content is the text of the request's result as decoded (bare): every
// replica that uses the decision has that content in its own request (the
// claim's key holds its SHA-256), so the claim log need not store and
// ship the full text (often tens of KiB) to every replica. The replica
// that reads a bare claim marks the result Partial (a store refuses to
// save it so) until a request brings its content (fillBare).

// bareCopy returns d's result without its content when a request
// brings that content back (plain), and whether it left it out.
func bareCopy(d *decision) (*harness.ToolResult, bool) {
	if !d.plain || d.res == nil {
		return d.res, false
	}
	c := *d.res
	c.Parts = nil
	return &c, true
}

// withContentOf returns won (a bare claim's result) with the content of
// local, a result of the same content hash that holds it (not Partial).
func withContentOf(won, local *harness.ToolResult) *harness.ToolResult {
	c := *won
	c.Parts, c.Structured, c.Partial = local.Parts, local.Structured, false
	return &c
}

// fillBare gives d, decided from a bare claim, its content from the
// request r belongs to. Called with the conversation locked.
func fillBare(d *decision, r *wireResult, body []byte) {
	if d == nil || !d.bare || d.res == nil || r.Decode == nil {
		return
	}
	text, _ := r.Decode(body)
	c := *d.res
	c.Parts, c.Partial = []harness.Part{harness.TextPart(text)}, false
	d.res, d.bare = &c, false
}

package proxy

import "github.com/agentharness/harness"

// A decision's claim carries the result without its full content when
// the content is the text of the request's result as decoded (bare): every
// replica that uses the decision has that content in its own request (the
// claim's key holds its SHA-256), so the claim log need not store and
// ship the full text (often tens of KiB) to every replica. The replica
// that reads a bare claim marks the result Partial (a store refuses to
// save it so) until a request brings its content (fillBare).

// bareCopy returns res without its content, and whether the content is
// what fillBare rebuilds from the request: one text part holding the
// result as its request carries it.
func bareCopy(res *harness.ToolResult, r *wireResult, body []byte) (*harness.ToolResult, bool) {
	if res == nil || res.Structured != nil || len(res.Parts) != 1 || res.Parts[0].Type != harness.PartText || r == nil || r.Decode == nil {
		return res, false
	}
	text, _ := r.Decode(body)
	if text != res.Parts[0].Text {
		return res, false
	}
	c := *res
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

package store

import "github.com/agentharness/harness"

// Partial reports whether res was loaded without its full payload: a guard
// cut it (the model's copy is loaded) and the payload is left in the store.
// Views never need more; [ResultFetcher.FullResult] fetches the rest.
//
// A loaded partial result has Model and Bytes set and Parts and Structured
// nil. A result recorded that way (a guard that kept no payload) reads as
// partial too; fetching it returns the same, so nothing is lost either way.
func Partial(res *harness.ToolResult) bool {
	return res != nil && (res.Partial || res.Model != nil && res.Parts == nil && res.Structured == nil && res.Bytes > 0)
}

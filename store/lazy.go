package store

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
)

// Partial reports whether res was loaded without its full payload: a guard
// cut it (the model's copy is loaded) and the payload is left in the store.
// Views never need more; use [Full] for the rest.
//
// A loaded partial result has Model and Bytes set and Parts and Structured
// nil. A result recorded that way (a guard that kept no payload) reads as
// partial too; fetching it returns the same, so nothing is lost either way.
func Partial(res *harness.ToolResult) bool {
	return res != nil && (res.Partial || res.Model != nil && res.Parts == nil && res.Structured == nil && res.Bytes > 0)
}

// Full returns res with its full payload: res itself when it is not
// [Partial], else the stored result fetched from f.
func Full(ctx context.Context, f ResultFetcher, convID string, res *harness.ToolResult) (*harness.ToolResult, error) {
	if !Partial(res) {
		return res, nil
	}
	full, err := f.FullResult(ctx, convID, res.CallID)
	if err != nil {
		return nil, fmt.Errorf("store: full result of %s: %w", res.CallID, err)
	}
	return full, nil
}

package benchlab

import (
	"context"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// readFill is a research preview for TestResearchDefaults: a spilled
// file read (callKind "read" or "shell read") gets guard.Relevant's
// head, matching lines and tail in up to fill bytes (3:3:2, within the
// ceiling), where every other result gets Relevant's default 4 KiB. It
// asks whether the reads the agent quotes from deserve more of the
// ceiling than search and program output do (docs/design.md, "The grid
// around the new default").
type readFill struct{ fill int }

// Split is Relevant's: a stream too large to rank keeps its head and tail.
func (p readFill) Split(w guard.Window, budget int) (int, int) {
	return guard.Relevant{}.Split(w, budget)
}

// Excerpt is Relevant's, with the shares filling min(budget, fill) for a read.
func (p readFill) Excerpt(ctx context.Context, call *harness.ToolCall, w guard.Window, budget int) (guard.Excerpt, bool) {
	if k := callKind(call.Name, string(call.Args)); k == "read" || k == "shell read" {
		b := min(budget, p.fill)
		return guard.Relevant{Head: 3 * b / 8, Middle: 3 * b / 8, Tail: b - 6*b/8}.Excerpt(ctx, call, w, budget)
	}
	return guard.Relevant{}.Excerpt(ctx, call, w, budget)
}

package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

// collapseGuard is an idea measured as an ablation: a result whose lines
// repeat, in runs of at least minRun lines, lines an earlier result of the
// conversation showed whole (overlapping reads of one file, a test re-run
// with the same output) gets a model copy in which each such run is one
// marker line naming the earlier call. The copy is decided at arrival, so
// requests stay append-only. Lines shorter than 8 characters never start
// a match (blank lines and braces repeat everywhere).
func collapseGuard(minRun int) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil || res.Cut() {
				return res, err
			}
			info, ok := harness.CallInfoFrom(ctx)
			if !ok || info.Transcript == nil {
				return res, nil
			}
			seen := map[string]string{} // line → call id that showed it
			for _, t := range info.Transcript.Turns {
				for _, r := range t.Rounds {
					for _, prev := range r.Results {
						if prev.Cut() {
							continue
						}
						for _, l := range strings.Split(prev.ModelText(), "\n") {
							if len(l) >= 8 {
								if _, dup := seen[l]; !dup {
									seen[l] = prev.CallID
								}
							}
						}
					}
				}
			}
			lines := strings.Split(res.ModelText(), "\n")
			var out []string
			collapsed := 0
			for i := 0; i < len(lines); {
				j := i
				for j < len(lines) && len(lines[j]) >= 8 && seen[lines[j]] != "" {
					j++
				}
				if j-i >= minRun {
					out = append(out, fmt.Sprintf("[%d lines identical to lines shown in the result of call %s — omitted]", j-i, seen[lines[i]]))
					collapsed += j - i
					i = j
					continue
				}
				if j == i {
					j++
				}
				out = append(out, lines[i:j]...)
				i = j
			}
			if collapsed == 0 {
				return res, nil
			}
			setModel(res, strings.Join(out, "\n"), harness.Cut{Kind: harness.CutDeduped, By: "collapse", Locator: "call:" + call.ID})
			return res, nil
		}
	}
}

package benchlab

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
)

// paysRule is an idea against re-reads whose price is the whole prefix: a
// cut at arrival is a bet that the agent will not read the hidden part
// back, and a re-read costs a request of the prefix the model was shown
// (the view), while the cut saves its hidden bytes in each later request.
// The run ceiling cuts a program's output only when the bytes it would
// hide, times the requests so far (standing for those to come, as the
// clear's payback reads them), are at least share × the view's bytes.
type paysRule struct {
	share float64
}

func paysPresets() []Preset {
	var out []Preset
	for _, pct := range []int{10, 25, 50, 100} {
		r := paysRule{share: float64(pct) / 100}
		out = append(out, Preset{Name: fmt.Sprintf("harness+runpays/%d", pct), Ablation: true, Build: r.build,
			Doc: fmt.Sprintf("harness whose run ceiling cuts only when the bytes it hides × the requests so far are at least %d%% of the bytes of the view the call answered", pct)})
	}
	return out
}

func (r paysRule) build(env replayengine.Env) (*replayengine.Config, error) {
	h := benchcore.DefaultHarness()
	h.Stack.NoRunCeiling = true
	rc := (&guard.RunCeiling{}).Guard()
	h.Stack.Inner = []harness.Guard{func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil || res.Stream != nil {
				return res, err
			}
			info, _ := harness.CallInfoFrom(ctx)
			hidden := resultBytes(res) - guard.DefaultRunCeilingBytes
			if hidden <= 0 || !r.pays(hidden, info.View) {
				return res, err
			}
			return rc(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) { return res, nil })(ctx, call)
		}
	}}
	return h.Build(env)
}

// pays reports whether hiding hidden bytes pays for share of a re-read of
// v's prefix within as many requests as v's conversation has made.
func (r paysRule) pays(hidden int, v *harness.View) bool {
	if v == nil {
		return true
	}
	prefix, requests := 0, 0
	for _, m := range v.Messages {
		for _, p := range m.Parts {
			prefix += p.Size()
		}
		for _, c := range m.ToolCalls {
			prefix += len(c.Name) + len(c.Args)
		}
		if m.Role == harness.RoleAssistant {
			requests++
		}
	}
	requests = max(requests, 1)
	return float64(hidden*requests) >= r.share*float64(prefix)
}

// resultBytes is the size of res's model copy.
func resultBytes(res *harness.ToolResult) int {
	n := 0
	for _, p := range res.ModelParts() {
		n += p.Size()
	}
	return n
}

// readHeadPresets show more of a file a reader tool returned over the
// ceiling: the result is spilled as by default, but its preview is
// budget bytes (most of it the file's head) instead of 4 KiB, so that an
// agent quoting the file finds most of it in view and reads back only
// the rest. Shell file prints (sh:file) with +sh.
func readHeadPresets() []Preset {
	var out []Preset
	for _, kib := range []int{12, 16, 20} {
		for _, sh := range []bool{false, true} {
			name := fmt.Sprintf("harness+readhead/%dk", kib)
			if sh {
				name += "+sh"
			}
			budget, sh := kib<<10, sh
			out = append(out, Preset{Name: name, Ablation: true,
				Doc: fmt.Sprintf("harness whose ceiling shows a file reader's spilled result as a %d KiB preview (head 3/4, middle and tail 1/8)", kib),
				Build: func(env replayengine.Env) (*replayengine.Config, error) {
					h := benchcore.DefaultHarness()
					inner := (&guard.ResultPolicy{MaxBytes: budget, Preview: guard.Relevant{Head: budget * 3 / 4, Middle: budget / 8, Tail: budget / 8}}).Guard()
					h.Stack.Inner = []harness.Guard{func(next harness.ToolFunc) harness.ToolFunc {
						return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
							k := toolKind(call.Name, string(call.Args))
							if k != "read" && (!sh || k != "sh:file") {
								return next(ctx, call)
							}
							res, err := next(ctx, call)
							if err != nil || res == nil || res.Stream != nil || resultBytes(res) <= guard.DefaultMaxBytes {
								return res, err
							}
							return inner(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) { return res, nil })(ctx, call)
						}
					}}
					return h.Build(env)
				}})
		}
	}
	return out
}

// rereadStopPreset is harness whose compaction stops clearing for cost
// once the agent has read back a spill file (the replay tells of each
// re-read, Config.Reread): a rough stand-in for a savings bank charged
// with the re-reads, which would refuse a clear once they have eaten
// what the cuts saved. The clears near the window and when idle stay.
func rereadStopPreset() Preset {
	return Preset{Name: "harness+rereadstop", Ablation: true,
		Doc: "harness whose compaction clears no more for cost once the agent has read back a spill file",
		Build: func(env replayengine.Env) (*replayengine.Config, error) {
			cfg, err := benchcore.DefaultHarness().Build(env)
			if err != nil {
				return nil, err
			}
			h := benchcore.DefaultHarness()
			h.NoClearOld = true
			stop, err := h.Build(env)
			if err != nil {
				return nil, err
			}
			var missed atomic.Bool
			last := len(cfg.Policies) - 1
			before, after := cfg.Policies[last], stop.Policies[len(stop.Policies)-1]
			cfg.Policies[last] = harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
				if missed.Load() {
					return after.ApplyView(ctx, v)
				}
				return before.ApplyView(ctx, v)
			})
			cfg.Reread = func(calls []harness.ToolCall) {
				if readsSpill(calls) {
					missed.Store(true)
				}
			}
			return cfg, nil
		}}
}

package benchlab

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
)

// lateRule is an idea for short conversations: a spill pays only when the
// result stays hidden over enough later requests to repay the round that
// may read it back, so a conversation that has made few rounds so far (a
// subagent's context that will report after a few reads) keeps results
// up to a higher ceiling. It reads only the past: the rounds of the
// conversation's transcript when the call ran.
type lateRule struct {
	// rounds is how many rounds the conversation must have made before
	// the default ceiling applies; early the ceiling is early.
	rounds, early int
	// run also leaves guard.RunCeiling out while the conversation is
	// early.
	run bool
}

// latePresets are the short-conversation rules measured against
// harness's defaults.
func latePresets() []Preset {
	var out []Preset
	for _, n := range []int{2, 4} {
		out = append(out,
			Preset{Name: fmt.Sprintf("harness+late/%d", n), Ablation: true, Build: lateRule{rounds: n, early: 64 << 10}.build,
				Doc: fmt.Sprintf("harness whose ceiling is 64 KiB instead of 24 KiB for results that arrive before the conversation's %d-th round", n+1)},
			Preset{Name: fmt.Sprintf("harness+late/%d+run", n), Ablation: true, Build: lateRule{rounds: n, early: 64 << 10, run: true}.build,
				Doc: fmt.Sprintf("harness+late/%d without the run ceiling either before that round", n)})
	}
	return out
}

// build is harness's defaults with the ceiling (and, with run, the run
// ceiling) switched by the rounds the conversation has made.
func (r lateRule) build(env replayengine.Env) (*replayengine.Config, error) {
	h := benchcore.DefaultHarness()
	h.Stack.NoCeiling = true
	h.Stack.NoRunCeiling = r.run
	cfg, err := h.Build(env)
	if err != nil {
		return nil, err
	}
	guards := []harness.Guard{r.switchGuard((&guard.ResultPolicy{MaxBytes: r.early}).Guard(), (&guard.ResultPolicy{}).Guard())}
	if r.run {
		guards = append(guards, r.switchGuard(nil, (&guard.RunCeiling{}).Guard()))
	}
	cfg.Guards = append(guards, cfg.Guards...)
	return cfg, nil
}

// switchGuard is early (nil: no guard) while the conversation of the
// call has made fewer than r.rounds rounds, then late.
func (r lateRule) switchGuard(early, late harness.Guard) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		e, l := next, late(next)
		if early != nil {
			e = early(next)
		}
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if info, ok := harness.CallInfoFrom(ctx); ok && roundsSoFar(info.Transcript) < r.rounds {
				return e(ctx, call)
			}
			return l(ctx, call)
		}
	}
}

// roundsSoFar counts the rounds of every turn of c.
func roundsSoFar(c *harness.Conversation) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, t := range c.Turns {
		if t != nil {
			n += len(t.Rounds)
		}
	}
	return n
}

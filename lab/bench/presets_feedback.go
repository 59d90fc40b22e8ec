package benchlab

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/spill"
)

// feedbackRule is an idea of live feedback: a read of a spill file is a
// miss the conversation has paid for, so once the agent has read one back
// the ceiling of the conversation's later results rises.
type feedbackRule struct {
	// from is the ceiling before the first read of a spill file, to the
	// ceiling after (0: none).
	from, to int
	// noRunAfter leaves guard.RunCeiling out after the first read too.
	noRunAfter bool
	// sameCall raises the ceiling only for a later call with the same tool
	// and arguments as one whose spill file was read back (the agent
	// reading the same file or running the same search again).
	sameCall bool
	// lowerAfter, when > 0, lowers the ceiling instead: from to to once the
	// conversation has spilled lowerAfter results and read none back,
	// and back to from at its first read of a spill file.
	lowerAfter int
	// deaf lowers without listening: no read of a spill file returns the
	// ceiling to from (the control of lowerAfter's feedback).
	deaf bool
}

// feedbackPresets are the rules of live feedback measured against
// harness's defaults: the replay tells them of each recovery round as it
// happens (replayengine.Config.Reread).
func feedbackPresets() []Preset {
	return []Preset{
		feedbackPreset("harness+feedback", "harness whose ceiling rises from 24 KiB to 64 KiB for the rest of a conversation once the agent reads back a spill file", feedbackRule{from: 24 << 10, to: 64 << 10}),
		feedbackPreset("harness+feedback/run", "harness+feedback whose run ceiling (guard.RunCeiling) also stops once the agent reads back a spill file", feedbackRule{from: 24 << 10, to: 64 << 10, noRunAfter: true}),
		feedbackPreset("harness+feedback/same", "harness+feedback whose raised ceiling holds only for a later call with the same tool and arguments as one whose spill file the agent read back", feedbackRule{from: 24 << 10, to: 64 << 10, sameCall: true}),
		feedbackPreset("harness+feedback/lower2", "harness whose ceiling falls from 24 KiB to 12 KiB once a conversation has spilled 2 results and read none back, and returns to 24 KiB at its first read of a spill file", feedbackRule{from: 24 << 10, to: 12 << 10, lowerAfter: 2}),
		feedbackPreset("harness+lower2", "harness whose ceiling falls from 24 KiB to 12 KiB once a conversation has spilled 2 results, whatever it reads back (harness+feedback/lower2 without the feedback)", feedbackRule{from: 24 << 10, to: 12 << 10, lowerAfter: 2, deaf: true}),
		feedbackPreset("harness+lower3", "harness+lower2 from the fourth spilled result", feedbackRule{from: 24 << 10, to: 12 << 10, lowerAfter: 3, deaf: true}),
		feedbackPreset("harness+lower4", "harness+lower2 from the fifth spilled result", feedbackRule{from: 24 << 10, to: 12 << 10, lowerAfter: 4, deaf: true}),
		feedbackPreset("harness+feedback/lower4", "harness+feedback/lower2 after 4 spilled results", feedbackRule{from: 24 << 10, to: 12 << 10, lowerAfter: 4}),
		feedbackPreset("harness@12k+feedback", "harness with a 12 KiB ceiling that rises to 24 KiB for the rest of a conversation once the agent reads back a spill file", feedbackRule{from: 12 << 10, to: 24 << 10}),
	}
}

func feedbackPreset(name, doc string, r feedbackRule) Preset {
	return Preset{Name: name, Doc: doc, Ablation: true, Build: r.build}
}

// build is harness's defaults with the ceiling (and the run ceiling, with
// noRunAfter) switched by what the replay reports the agent read back.
func (r feedbackRule) build(env replayengine.Env) (*replayengine.Config, error) {
	h := benchcore.DefaultHarness()
	h.Stack.NoCeiling = true
	h.Stack.NoRunCeiling = r.noRunAfter
	cfg, err := h.Build(env)
	if err != nil {
		return nil, err
	}
	var missed atomic.Bool
	before := (&guard.ResultPolicy{MaxBytes: r.from}).Guard()
	after := (&guard.ResultPolicy{MaxBytes: r.to, NoCeiling: r.to == 0}).Guard()
	if r.sameCall {
		return r.buildSameCall(cfg, before, after)
	}
	if r.lowerAfter > 0 {
		return r.buildLower(cfg, before, after)
	}
	guards := []harness.Guard{switchGuard(&missed, before, after)}
	if r.noRunAfter {
		guards = append(guards, switchGuard(&missed, (&guard.RunCeiling{}).Guard(), nil))
	}
	cfg.Guards = append(guards, cfg.Guards...)
	cfg.Reread = func(calls []harness.ToolCall) {
		if readsSpill(calls) {
			missed.Store(true)
		}
	}
	return cfg, nil
}

// switchGuard is before until missed is set, then after (nil: no guard).
func switchGuard(missed *atomic.Bool, before, after harness.Guard) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		b := before(next)
		a := next
		if after != nil {
			a = after(next)
		}
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if missed.Load() {
				return a(ctx, call)
			}
			return b(ctx, call)
		}
	}
}

// readsSpill reports whether one of calls names a spill file in its
// arguments: a path under spill.Folder.
func readsSpill(calls []harness.ToolCall) bool {
	for _, c := range calls {
		if strings.Contains(string(c.Args), spill.Folder+"/") {
			return true
		}
	}
	return false
}

// buildSameCall is build for sameCall: the ceiling remembers which call
// each spill file holds, and a read of one marks that call's tool and
// arguments; a later call with the same tool and arguments gets after.
func (r feedbackRule) buildSameCall(cfg *replayengine.Config, before, after harness.Guard) (*replayengine.Config, error) {
	var mu sync.Mutex
	spilled := map[string]string{} // spill locator → tool and arguments
	missed := map[string]bool{}    // tool and arguments read back
	key := func(c *harness.ToolCall) string { return c.Name + "\x00" + string(c.Args) }
	g := func(next harness.ToolFunc) harness.ToolFunc {
		b, a := before(next), after(next)
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			mu.Lock()
			raised := missed[key(call)]
			mu.Unlock()
			if raised {
				return a(ctx, call)
			}
			res, err := b(ctx, call)
			if res != nil {
				for _, c := range res.Cuts {
					if c.Kind == harness.CutSpilled {
						mu.Lock()
						spilled[c.Locator] = key(call)
						mu.Unlock()
					}
				}
			}
			return res, err
		}
	}
	cfg.Guards = append([]harness.Guard{g}, cfg.Guards...)
	cfg.Reread = func(calls []harness.ToolCall) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range calls {
			for loc, k := range spilled {
				if strings.Contains(string(c.Args), loc) {
					missed[k] = true
				}
			}
		}
	}
	return cfg, nil
}

// buildLower is build for lowerAfter: after (the lower ceiling) once
// the conversation has spilled lowerAfter results with no read of a spill
// file, before again from its first read.
func (r feedbackRule) buildLower(cfg *replayengine.Config, before, after harness.Guard) (*replayengine.Config, error) {
	var spills atomic.Int64
	var missed atomic.Bool
	g := func(next harness.ToolFunc) harness.ToolFunc {
		b, a := before(next), after(next)
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			run := b
			if !missed.Load() && spills.Load() >= int64(r.lowerAfter) {
				run = a
			}
			res, err := run(ctx, call)
			if res != nil && len(res.Cuts) > 0 && res.Cuts[len(res.Cuts)-1].Kind == harness.CutSpilled {
				spills.Add(1)
			}
			return res, err
		}
	}
	cfg.Guards = append([]harness.Guard{g}, cfg.Guards...)
	cfg.Reread = func(calls []harness.ToolCall) {
		if !r.deaf && readsSpill(calls) {
			missed.Store(true)
		}
	}
	return cfg, nil
}

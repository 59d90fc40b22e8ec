package main

import (
	"flag"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/tokens"
)

// policyFlags are the context policies of "harness run": the per-result
// ceiling, the per-turn evidence budget, stuck-loop detection and
// compaction. Their defaults are the library's.
type policyFlags struct {
	maxBytes   int
	noSpill    bool
	preview    string
	noCollapse bool
	dedupe     int
	turnChars  int
	everyRound bool
	noStuck    bool
	noCompact  bool
	clearOld   int
	window     int
}

func (p *policyFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&p.maxBytes, "max-bytes", guard.DefaultMaxBytes, "ceiling of one tool result's model copy in bytes; 0 turns it off")
	fs.BoolVar(&p.noSpill, "no-spill", false, "cut oversized results to a preview without saving the rest to .harness/spill/")
	fs.StringVar(&p.preview, "preview", "relevant", "what an oversized result's preview shows: relevant (the default: 1.5 KiB head, 1 KiB tail and 1.5 KiB of the lines matching the call's arguments, the agent's reasoning and the input) or head-tail (the first 3 KiB and the last 1 KiB)")
	fs.BoolVar(&p.noCollapse, "no-collapse", false, "show repeated blocks of lines the model already sees in full instead of as one marker line")
	fs.IntVar(&p.dedupe, "dedupe", 0, "suppress exact repeats of read-only calls from the Nth identical call (2 or more; 0 off)")
	fs.IntVar(&p.turnChars, "turn-budget", guard.DefaultTurnChars, "evidence budget of a turn's tool results in characters; 0 turns it off")
	fs.BoolVar(&p.everyRound, "budget-every-round", false, "apply the turn budget to every request, not only the final one")
	fs.BoolVar(&p.noStuck, "no-stuck", false, "turn off stuck-loop detection")
	fs.BoolVar(&p.noCompact, "no-compact", false, "turn off compaction")
	fs.IntVar(&p.clearOld, "clear-old", guard.DefaultCompactClearOld, "clear old tool results (all but the newest 8 rounds) in one chunk once clearing them saves this many tokens and repays the cache miss; 0 turns it off (compaction then clears only near the window)")
	fs.IntVar(&p.window, "window", 0, "the model's context window in tokens (0: from the built-in table)")
}

// build returns the guards and view policies the flags describe.
// summarizer writes compaction summaries (the run's own model); counter
// and cal measure requests for compaction.
func (p *policyFlags) build(modelName string, summarizer harness.Model, counter tokens.Counter, cal *tokens.Calibrator) ([]harness.Guard, []harness.ViewPolicy, error) {
	if p.dedupe == 1 || p.dedupe < 0 {
		return nil, nil, fmt.Errorf("%w: --dedupe %d: want 0 (off) or 2 or more", errUsage, p.dedupe)
	}
	if p.maxBytes < 0 || p.turnChars < 0 || p.window < 0 || p.clearOld < 0 {
		return nil, nil, fmt.Errorf("%w: --max-bytes, --turn-budget, --clear-old and --window take sizes ≥ 0", errUsage)
	}
	rp := &guard.ResultPolicy{MaxBytes: guard.Bytes(p.maxBytes), NoSpill: p.noSpill}
	switch p.preview {
	case "head-tail":
		rp.Preview = guard.HeadTail{}
	case "relevant", "":
		rp.Preview = guard.Relevant{}
	default:
		return nil, nil, fmt.Errorf("%w: --preview %q: want head-tail or relevant", errUsage, p.preview)
	}
	if p.dedupe > 0 {
		rp.Dedupe = guard.Dedupe{From: p.dedupe}
	}
	guards := []harness.Guard{rp.Guard()}
	if !p.noCollapse {
		// Inside the ceiling: a re-read that collapses under it needs no
		// spill.
		guards = append(guards, (&guard.Collapse{}).Guard())
	}
	var policies []harness.ViewPolicy
	if !p.noStuck {
		policies = append(policies, &guard.StuckPolicy{})
	}
	if p.turnChars > 0 {
		tb := &guard.TurnBudget{Chars: p.turnChars}
		if p.everyRound {
			tb.When = guard.EveryRound
		}
		policies = append(policies, tb)
	}
	if !p.noCompact {
		clearOld := p.clearOld
		if clearOld == 0 {
			clearOld = -1 // the flag's 0 is "off"; CompactPolicy's is "default"
		}
		policies = append(policies, &guard.CompactPolicy{Model: modelName, Window: p.window, Summarizer: summarizer,
			Counter: counter, Calibrator: cal, ClearOld: clearOld})
	}
	return guards, policies, nil
}

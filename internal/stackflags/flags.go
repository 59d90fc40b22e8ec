// Package stackflags holds the command-line switches of the default stack
// (stack.Config), shared by harness run and the Temporal worker, so both
// commands spell, default and check them alike.
package stackflags

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/tokens"
)

// Flags are the context policies of a command that runs turns: the
// per-result ceiling, the per-turn evidence budget, stuck-loop detection
// and compaction. Their defaults are the library's.
type Flags struct {
	maxBytes   int
	runBytes   int
	noSpill    bool
	preview    string
	noCollapse bool
	dedupe     int
	turnChars  int
	everyRound bool
	onArrival  bool
	noStuck    bool
	noCompact  bool
	clearOld   int
	clearIdle  IdleClear
	window     int
}

// IdleClear is the value of --clear-when-idle. Its zero value is "auto":
// the pause after which the run's model's provider guarantees its prompt
// cache gone (catalog.CacheLifetime: 5m for Claude, 1h for OpenAI's models,
// off for a model it does not know), the default. "off" (or 0) turns the
// clear off; a duration is the threshold for every model.
type IdleClear struct {
	// Off turns the clear off (CompactPolicy.NoClearWhenIdle).
	Off bool
	// After, when positive, is the threshold (CompactPolicy.ClearWhenIdle);
	// zero with Off unset is auto.
	After time.Duration
}

// String prints the value as Set reads it.
func (v *IdleClear) String() string {
	switch {
	case v.Off:
		return "off"
	case v.After == 0:
		return "auto"
	}
	return v.After.String()
}

// Set reads auto, off or a duration ("5m", "1h"; "0" is off); a negative
// duration is kept for Check to refuse with the other sizes.
func (v *IdleClear) Set(s string) error {
	switch s {
	case "auto":
		*v = IdleClear{}
		return nil
	case "off":
		*v = IdleClear{Off: true}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want auto, off or a duration such as 5m or 1h")
	}
	*v = IdleClear{After: d, Off: d == 0}
	return nil
}

// Register adds the switches to fs.
func (p *Flags) Register(fs *flag.FlagSet) {
	fs.IntVar(&p.maxBytes, "max-bytes", guard.DefaultMaxBytes, "ceiling of one tool result's model copy in bytes; 0 turns it off")
	fs.BoolVar(&p.noSpill, "no-spill", false, "cut oversized results to a preview without saving the rest to .harness/spill/")
	fs.StringVar(&p.preview, "preview", "relevant", "what an oversized result's preview shows: relevant (the default: 1.5 KiB head, 1 KiB tail and 1.5 KiB of the lines matching the call's arguments, the agent's reasoning and the input) or head-tail (the first 3 KiB and the last 1 KiB)")
	fs.IntVar(&p.runBytes, "run-ceiling", guard.DefaultRunCeilingBytes, "ceiling in bytes of the output of a shell command that runs a program (tests, builds, scripts), cut at arrival when over 3 KiB; 0 turns it off (the output then gets --max-bytes)")
	fs.BoolVar(&p.noCollapse, "no-collapse", false, "show repeated blocks of lines the model already sees in full instead of as one marker line")
	fs.IntVar(&p.dedupe, "dedupe", 0, "suppress exact repeats of read-only calls from the Nth identical call (2 or more; 0 off)")
	fs.IntVar(&p.turnChars, "turn-budget", policy.DefaultTurnChars, "evidence budget of a turn's tool results in characters; 0 turns it off")
	fs.BoolVar(&p.everyRound, "budget-every-round", false, "apply the turn budget to every request, not only the final one")
	fs.BoolVar(&p.onArrival, "budget-on-arrival", false, "decide the turn budget as each round's results arrive (the newest round whole),\n"+
		"so a request answered with tools still offered is bounded too")
	fs.BoolVar(&p.noStuck, "no-stuck", false, "turn off stuck-loop detection")
	fs.BoolVar(&p.noCompact, "no-compact", false, "turn off compaction")
	fs.IntVar(&p.clearOld, "clear-old", policy.DefaultCompactClearOld, "clear old tool results (all but the newest 4 rounds, and the ones the agent quoted in the 3 rounds before) in one chunk once clearing them saves this many tokens and repays the cache miss; 0 turns it off (compaction then clears only near the window)")
	fs.Var(&p.clearIdle, "clear-when-idle", "after a pause longer than this, clear the old tool results the cost trigger may clear, however few, since the\n"+
		"clear breaks no warm cache: auto (the default: the pause after which the model's provider guarantees its prompt cache\n"+
		"gone: 5m for claude-*, 1h for gpt-*, o1/o3/o4 and codex-*; off for other models), off, or a duration such as 5m (see lab/NOTEBOOK.md, \"Cold caches\")")
	fs.IntVar(&p.window, "window", 0, "the model's context window in tokens (0: from the built-in table)")
}

// ErrUsage marks the errors of switches that make no sense: a command
// reports them as usage errors.
var ErrUsage = errors.New("usage")

// AsUsage returns err with ErrUsage replaced by usage, a command's own
// usage sentinel, and the same message; any other error as it is.
func AsUsage(err, usage error) error {
	if !errors.Is(err, ErrUsage) {
		return err
	}
	return fmt.Errorf("%w: %s", usage, strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
}

// Check reports, as an ErrUsage, switches that make no sense (negative
// sizes, an unknown preview, --dedupe 1, both turn-budget timings), so a
// command can refuse them before it opens anything.
func (p *Flags) Check() error {
	switch {
	case p.dedupe == 1 || p.dedupe < 0:
		return fmt.Errorf("%w: --dedupe %d: want 0 (off) or 2 or more", ErrUsage, p.dedupe)
	case p.maxBytes < 0 || p.runBytes < 0 || p.turnChars < 0 || p.window < 0 || p.clearOld < 0 || p.clearIdle.After < 0:
		return fmt.Errorf("%w: --max-bytes, --run-ceiling, --turn-budget, --clear-old, --clear-when-idle and --window take sizes ≥ 0", ErrUsage)
	case p.preview != "head-tail" && p.preview != "relevant" && p.preview != "":
		return fmt.Errorf("%w: --preview %q: want head-tail or relevant", ErrUsage, p.preview)
	case p.turnChars != 0 && p.everyRound && p.onArrival:
		return fmt.Errorf("%w: --budget-every-round and --budget-on-arrival exclude each other", ErrUsage)
	}
	return nil
}

// Config returns the stack the flags describe: with every flag at its
// default, the default stack (stack.Config's zero value) with the run's
// model, counter, calibrator and summarizer given to compaction.
// summarizer writes compaction summaries (the run's own model); counter
// and cal measure requests for compaction.
func (p *Flags) Config(modelName string, summarizer harness.Model, counter tokens.Counter, cal *tokens.Calibrator) (stack.Config, error) {
	var c stack.Config
	if err := p.Check(); err != nil {
		return c, err
	}
	switch {
	case p.runBytes == 0:
		c.NoRunCeiling = true // the flag's 0 is "off"; RunCeiling's is "default"
	case p.runBytes != guard.DefaultRunCeilingBytes || p.noSpill:
		c.RunCeiling = &guard.RunCeiling{MaxBytes: p.runBytes, NoSpill: p.noSpill}
	}
	rp := &guard.ResultPolicy{NoSpill: p.noSpill}
	changed := p.noSpill || p.dedupe > 0
	if p.maxBytes != guard.DefaultMaxBytes {
		// The flag's 0 is "off"; ResultPolicy's zero is "default".
		rp.MaxBytes, rp.NoCeiling, changed = p.maxBytes, p.maxBytes == 0, true
	}
	if p.preview == "head-tail" {
		rp.Preview, changed = guard.HeadTail{}, true
	}
	if p.dedupe > 0 {
		rp.Dedupe = guard.Dedupe{From: p.dedupe}
	}
	if changed {
		c.Ceiling = rp
	}
	c.NoCollapse, c.NoStuck, c.NoCompact = p.noCollapse, p.noStuck, p.noCompact
	// Compaction's placeholders point at recall to get a result back; with
	// compaction off nothing does.
	c.NoRecall = p.noCompact
	switch {
	case p.turnChars == 0:
		c.NoTurnBudget = true
	case p.turnChars != policy.DefaultTurnChars || p.everyRound || p.onArrival:
		c.TurnBudget = &policy.TurnBudget{Chars: p.turnChars}
		switch {
		case p.everyRound:
			c.TurnBudget.When = policy.EveryRound
		case p.onArrival:
			c.TurnBudget.When = policy.OnArrival
		}
	}
	if !p.noCompact {
		c.Compact = &policy.CompactPolicy{Model: modelName, Window: p.window, Summarizer: summarizer, Counter: counter, Calibrator: cal, ClearWhenIdle: p.clearIdle.After, NoClearWhenIdle: p.clearIdle.Off}
		switch p.clearOld {
		case 0:
			c.Compact.NoClearOld = true // the flag's 0 is "off"; CompactPolicy's is "default"
		case policy.DefaultCompactClearOld:
		default:
			c.Compact.ClearOld = p.clearOld
		}
	}
	return c, nil
}

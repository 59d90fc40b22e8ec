package benchcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/toolselect"
)

// Preset is a named policy configuration with a one-line description.
type Preset struct {
	Name string
	// Doc says what the preset reproduces and from which figures.
	Doc string
	// Ablation is set on presets that vary harness's defaults (the lab's
	// ablations and ideas, and tests' contrasts).
	Ablation bool
	// OptIn is set on presets a command's short default list leaves out
	// (harness bench with no argument, harness audit): they run when
	// named or with every preset.
	OptIn bool
	Build func(env replayengine.Env) (*replayengine.Config, error)
}

// Policy returns the preset as a replayengine.Policy.
func (p Preset) Policy() replayengine.Policy { return replayengine.Policy{Name: p.Name, New: p.Build} }

// HarnessConfig is harness's defaults with changes applied: the default
// stack (package stack) and what only a replay varies.
type HarnessConfig struct {
	Stack stack.Config
	// selector offers each turn the tools toolselect.Selector (threshold
	// 24, top 20, BM25, must-keep) picks for its input.
	Selector bool
	// reselect is toolselect.Selector.NoSticky: every turn selects
	// afresh, even when its list breaks the cached prefix.
	Reselect bool
	// deferTools is toolselect.Selector.Defer: tools the first turn does
	// not select are offered as stubs.
	DeferTools bool
	// settleStubs is toolselect.Selector.SettleStubs: a kept list that
	// settles keeps its tools and the new turn's whole, the rest stubs.
	SettleStubs bool
	// pinned is toolselect.Selector.Pinned: patterns of tools every
	// selection keeps whole (nil: none beyond the identity tools).
	Pinned []string
	// clearAt, when > 0, starts compaction's chunked clearing when a
	// request reaches this many tokens (down to half of it, chunks of a
	// third) instead of at 75% of the window.
	ClearAt int
	// clearOld is CompactPolicy.ClearOld (0: its default).
	ClearOld int
	// noClearOld is CompactPolicy.NoClearOld: no cost trigger.
	NoClearOld bool
	// clearOldKeep is CompactPolicy.ClearOldKeepRounds (0: its default).
	ClearOldKeep int
	// unbounded is CompactPolicy.Unbounded: clears for cost without the
	// savings bank.
	Unbounded bool
	// finalTools sends the tool schemas on the synthesis call, calls
	// disabled (harness.Options.KeepToolsOnFinal, replayengine.Config.KeepToolsOnFinal).
	FinalTools bool
	// Rule is CompactPolicy.Rule: which old results a clear for cost
	// takes and what a cleared result shows (the zero Rule: the default).
	Rule policy.ClearRule
	// active is CompactPolicy.ActiveRounds (0: its default): a clear
	// leaves whole the results the agent quoted in that many of its
	// newest rounds; noActive is CompactPolicy.NoKeepActive.
	Active   int
	NoActive bool
	// clearIdle is CompactPolicy.ClearWhenIdle (0: catalog.CacheLifetime of
	// the recorded model); noClearIdle is CompactPolicy.NoClearWhenIdle;
	// clearIdleKeep is CompactPolicy.ClearWhenIdleKeepRounds.
	ClearIdle     time.Duration
	NoClearIdle   bool
	ClearIdleKeep int
	// clearIdleBank is CompactPolicy.ClearWhenIdleBanked.
	ClearIdleBank bool
	// ChargeRereads is CompactPolicy.ChargeRereads, with the replay's
	// recovery rounds sent (replayengine.Config.SendRecoveries) so the
	// bank sees the re-reads it charges, as it does live.
	ChargeRereads bool
	// Prices is CompactPolicy.Prices: the price models a clear for cost
	// must not lose under (nil: every one the policy knows).
	Prices []policy.CachePrice
}

// DefaultHarness is the harness preset's configuration: stack.Config's
// zero value, and the tool selection harness run makes, which pins the
// agent's own tools (harness run pins its workspace and recall tools; a
// recording's client's are clientTools), so only the tools an MCP server
// adds are selected.
func DefaultHarness() HarnessConfig { return HarnessConfig{Selector: true, Pinned: clientTools()} }

// HarnessStack is the stack of the harness preset: the default
// (stack.Config's zero value), which harness run also builds with its
// default flags.
func HarnessStack() stack.Config { return DefaultHarness().Stack }

func (h HarnessConfig) Build(env replayengine.Env) (*replayengine.Config, error) {
	sc := h.Stack
	if !sc.NoCompact {
		idle, noIdle := h.idleAfter(env)
		w := ModelWindow(env.Model)
		sc.Compact = &policy.CompactPolicy{Model: env.Model, Counter: env.Counter, Window: w, ClearOld: h.ClearOld, NoClearOld: h.NoClearOld, ClearOldKeepRounds: h.ClearOldKeep, Unbounded: h.Unbounded, Rule: h.Rule,
			NoKeepActive: h.NoActive, ActiveRounds: h.Active, ClearWhenIdle: idle, NoClearWhenIdle: noIdle, ClearWhenIdleKeepRounds: h.ClearIdleKeep, ClearWhenIdleBanked: h.ClearIdleBank,
			ChargeRereads: h.ChargeRereads, Prices: h.Prices}
		if h.ClearAt > 0 {
			sc.Compact = &policy.CompactPolicy{Model: env.Model, Counter: env.Counter, Window: w,
				HighWater: float64(h.ClearAt) / float64(w), Target: float64(h.ClearAt) / 2 / float64(w), ClearAtLeast: h.ClearAt / 3, NoClearOld: true, Unbounded: h.Unbounded}
		}
	}
	st := stack.New(&sc)
	cfg := &replayengine.Config{Guards: st.Guards, Policies: st.Policies, Recall: st.Recall, KeepToolsOnFinal: h.FinalTools, SendRecoveries: h.ChargeRereads}
	if h.Selector {
		cfg.Selector = &toolselect.Selector{NoSticky: h.Reselect, Defer: h.DeferTools, SettleStubs: h.SettleStubs, Pinned: h.Pinned}
	}
	return cfg, nil
}

// idleAfter returns the pause after which the preset's compaction clears
// because the cache has gone cold (CompactPolicy.ClearWhenIdle and
// NoClearWhenIdle). By default that is catalog.CacheLifetime of the recorded
// model, as harness run's --clear-when-idle auto reads it, but never
// sooner than the cache the replay is priced with lives (env.CacheTTL,
// bench's --cache-ttl): a user whose cache lives longer than its
// provider's default sets --clear-when-idle to that lifetime, and a
// clear sooner would pay a miss that keeping everything never pays. A
// cache priced as never expiring has no idle clear. A threshold the
// preset sets itself (a research variant) stands.
func (h HarnessConfig) idleAfter(env replayengine.Env) (time.Duration, bool) {
	if h.ClearIdle != 0 || h.NoClearIdle {
		return h.ClearIdle, h.NoClearIdle
	}
	d := pricedIdle(env, catalog.CacheLifetime(env.Model))
	return d, d == 0
}

// pricedIdle is lifetime, the cache's lifetime a policy assumes, made
// no shorter than the one env prices; 0 (no idle clear) when env prices
// a cache that never expires or lifetime is 0 (the model's lifetime is
// unknown).
func pricedIdle(env replayengine.Env, lifetime time.Duration) time.Duration {
	switch {
	case env.NoCacheExpiry:
		return 0
	case lifetime > 0 && env.CacheTTL > lifetime:
		return env.CacheTTL
	}
	return lifetime
}

// ModelWindow is the context window of model, 128k when the table does not
// know it (the window of the recorded runs' deepseek-chat and of gpt-4o).
func ModelWindow(model string) int {
	if w, ok := lookupWindow(model); ok {
		return w
	}
	return 128_000
}

// Presets returns every preset: the baseline, harness's defaults and
// harness proxy's rule, then the other systems' rules (anchors).
func Presets() []Preset {
	out := []Preset{nonePreset(), harnessPreset(), proxyPreset()}
	return append(out, anchorPresets()...)
}

// nonePreset keeps everything: the baseline of every ratio.
func nonePreset() Preset {
	return Preset{Name: "none", Doc: "keep everything: every result whole in every request (the baseline of every ratio)",
		Build: func(replayengine.Env) (*replayengine.Config, error) { return &replayengine.Config{}, nil }}
}

// harnessPreset is harness's defaults: the default stack and the tool
// selector.
func harnessPreset() Preset {
	return Preset{Name: "harness", Doc: "harness's defaults: ResultPolicy (ceiling by the call: 8 KiB for a search's, a listing's or git's output, 10 KiB for a shell's other output once the conversation has spilled 2 results, 24 KiB for the rest; spill, guard.Relevant 4 KiB preview: head, tail and the lines matching what the agent looks for), RunCeiling (a shell command's output that runs a program cut to 2 KiB at arrival when over 3 KiB, spill, relevant preview), Collapse (blocks of 8+ lines the model already sees become one marker), TurnBudget (24,000 chars before the final round, floor 1,200), StuckPolicy (nudge 3, stop 6), CompactPolicy (old results cleared in one chunk once they add up to 12,000 tokens and the clear pays for its cache miss and the savings bank covers it, newest 4 rounds kept and, whole, the results the agent quoted in the 3 rounds before; 75% → 55% of the window in chunks of 10%; and, at a request after a pause longer than the cache lives, every old result the cost trigger may clear: catalog.CacheLifetime of the recorded model, never shorter than the cache the bench prices lives), toolselect.Selector once per turn (over 24 tools: top 20 by BM25 plus must-keep, the clients' own tools pinned: ClientTools); recall of stored results",
		Build: DefaultHarness().Build}
}

// anchorPresets are the rules of other systems, as their code documents
// them or as measured (anchors.go).
func anchorPresets() []Preset {
	return []Preset{harnessRSPreset(), claudeCodePreset(), codexPreset(), sweAgentPreset(), openHandsPreset(),
		crushPreset(), anthropicContextEditingPreset(), geminiCLIPreset(), opencodePreset()}
}

// References returns the presets that are bounds, not policies, run by
// default after the policies (and only when named in a list):
//
//   - "floor" shows every tool result as an empty string: the cost no
//     result policy can go under (the model still reads the system prompt,
//     the inputs and its own messages, and writes its output);
//   - "oracle" knows the future: the results the agent will use (those a
//     needle comes from, see replayengine.Needles) are shown whole, every other
//     result empty. It is what a policy that knew which results matter
//     would cost at 100% visible evidence, so "removed" between floor and
//     oracle is the price of not knowing.
func References() []Preset {
	return []Preset{
		{Name: "floor", Doc: "a bound, not a policy: every tool result shown as an empty string (marked truncated), the least any policy on tool results could cost",
			Build: func(replayengine.Env) (*replayengine.Config, error) {
				return &replayengine.Config{Guards: []harness.Guard{emptyResults}}, nil
			}},
		{Name: "oracle", Doc: "a bound that knows the future, not a policy: the results the agent will use (where a needle comes from) shown whole, every other result as an empty string; 100% visible at the least cost of keeping used results whole",
			Build: func(env replayengine.Env) (*replayengine.Config, error) {
				used := map[string]bool{}
				for _, n := range env.Needles {
					used[n.CallID] = true
				}
				return &replayengine.Config{Guards: []harness.Guard{emptyUnless("oracle", used)}}, nil
			}},
	}
}

// emptyResults shows the model nothing of any result.
func emptyResults(next harness.ToolFunc) harness.ToolFunc { return emptyUnless("floor", nil)(next) }

// emptyUnless shows the model nothing of any result but those of the calls
// in keep, which stay whole; by names the bound in the cuts.
func emptyUnless(by string, keep map[string]bool) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err == nil && res != nil && !keep[call.ID] {
				setModel(res, "", harness.Cut{Kind: harness.CutTruncated, By: by, Locator: locator.Call(call.ID)})
			}
			return res, err
		}
	}
}

// PresetNames lists the names of Presets and References.
func PresetNames() []string {
	var out []string
	for _, p := range append(Presets(), References()...) {
		out = append(out, p.Name)
	}
	return out
}

// Lookup returns the preset or reference called name.
func Lookup(name string) (Preset, error) {
	ps := append(Presets(), References()...)
	if i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name }); i >= 0 {
		return ps[i], nil
	}
	return Preset{}, fmt.Errorf("bench: no preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
}

// clientTools returns the names of the built-in tools of the clients
// whose recordings the bench reads, as exact toolselect patterns: the
// tools a client always sends, which a user would pin so that a
// selector that defers (toolselect.Selector.Defer) stubs only the tools
// an MCP server adds. Claude Code's are the 16 that open
// testdata/tools100.json; Codex's and Gemini CLI's are the function
// tools their recorded sessions call (Codex's web search is the
// provider's own tool, not a function, so it is not listed). A name
// that is not in a request's tool list matches nothing.
func clientTools() []string {
	claudeCode := []string{"Bash", "Read", "Edit", "MultiEdit", "Write", "Grep", "Glob", "LS", "TodoWrite", "Task",
		"WebFetch", "WebSearch", "NotebookEdit", "ExitPlanMode", "BashOutput", "KillBash"}
	codex := []string{"shell", "shell_command", "apply_patch", "update_plan"}
	geminiCLI := []string{"run_shell_command", "read_file", "replace", "grep_search", "update_topic"}
	return slices.Concat(claudeCode, codex, geminiCLI)
}

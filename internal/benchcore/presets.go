package benchcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/toolselect"
)

// Preset is a named policy configuration with a one-line description.
type Preset struct {
	Name string
	// Doc says what the preset reproduces and from which figures.
	Doc string
	// Ablation is set on presets that vary harness's defaults.
	Ablation bool
	// OptIn is set on presets a command's short default list leaves out
	// (harness bench with no argument, harness audit): they run when
	// named or with every preset.
	OptIn bool
	Build func(env replay.Env) (*replay.Config, error)
}

// Policy returns the preset as a replay.Policy.
func (p Preset) Policy() replay.Policy { return replay.Policy{Name: p.Name, New: p.Build} }

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
	// disabled (harness.Options.KeepToolsOnFinal, replay.Config.KeepToolsOnFinal).
	FinalTools bool
	// quoted is CompactPolicy.KeepQuoted: a cleared result keeps the lines
	// the agent quoted from it.
	Quoted bool
	// clearFrom is CompactPolicy.ClearFrom: a clear for cost takes only
	// results of at least this many tokens.
	ClearFrom int
	// keepPreviews is CompactPolicy.KeepPreviews.
	KeepPreviews bool
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
}

// DefaultHarness is the harness preset's configuration: stack.Config's
// zero value, and the tool selection harness run makes, which pins the
// agent's own tools (harness run pins its workspace and recall tools; a
// recording's client's are clientTools), so only the tools an MCP server
// adds are selected.
func DefaultHarness() HarnessConfig { return HarnessConfig{Selector: true, Pinned: clientTools()} }

// previousHarness is the default before the run ceiling, the working
// set: no RunCeiling, every old result cleared, 8 rounds kept.
func previousHarness() HarnessConfig {
	h := DefaultHarness()
	h.Stack.NoRunCeiling, h.NoActive, h.ClearOldKeep, h.NoClearIdle = true, true, 8, true
	return h
}

// HarnessStack is the stack of the harness preset: the default
// (stack.Config's zero value), which harness run also builds with its
// default flags.
func HarnessStack() stack.Config { return DefaultHarness().Stack }

func (h HarnessConfig) Build(env replay.Env) (*replay.Config, error) {
	sc := h.Stack
	if !sc.NoCompact {
		idle, noIdle := h.idleAfter(env)
		w := ModelWindow(env.Model)
		sc.Compact = &policy.CompactPolicy{Model: env.Model, Counter: env.Counter, Window: w, ClearOld: h.ClearOld, NoClearOld: h.NoClearOld, ClearOldKeepRounds: h.ClearOldKeep, Unbounded: h.Unbounded, KeepQuoted: h.Quoted,
			NoKeepActive: h.NoActive, ActiveRounds: h.Active, ClearFrom: h.ClearFrom, KeepPreviews: h.KeepPreviews, ClearWhenIdle: idle, NoClearWhenIdle: noIdle, ClearWhenIdleKeepRounds: h.ClearIdleKeep, ClearWhenIdleBanked: h.ClearIdleBank}
		if h.ClearAt > 0 {
			sc.Compact = &policy.CompactPolicy{Model: env.Model, Counter: env.Counter, Window: w,
				HighWater: float64(h.ClearAt) / float64(w), Target: float64(h.ClearAt) / 2 / float64(w), ClearAtLeast: h.ClearAt / 3, NoClearOld: true, Unbounded: h.Unbounded}
		}
	}
	st := stack.New(&sc)
	cfg := &replay.Config{Guards: st.Guards, Policies: st.Policies, Recall: st.Recall, KeepToolsOnFinal: h.FinalTools}
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
func (h HarnessConfig) idleAfter(env replay.Env) (time.Duration, bool) {
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
func pricedIdle(env replay.Env, lifetime time.Duration) time.Duration {
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
// harness proxy's rule, the other systems' rules (anchors), then
// harness's ablations.
func Presets() []Preset {
	out := []Preset{nonePreset(), harnessPreset(), proxyPreset()}
	out = append(out, anchorPresets()...)
	return append(out, ablationPresets()...)
}

// nonePreset keeps everything: the baseline of every ratio.
func nonePreset() Preset {
	return Preset{Name: "none", Doc: "keep everything: every result whole in every request (the baseline of every ratio)",
		Build: func(replay.Env) (*replay.Config, error) { return &replay.Config{}, nil }}
}

// harnessPreset is harness's defaults: the default stack and the tool
// selector.
func harnessPreset() Preset {
	return Preset{Name: "harness", Doc: "harness's defaults: ResultPolicy (24 KiB ceiling, spill, guard.Relevant 4 KiB preview: head, tail and the lines matching what the agent looks for), RunCeiling (a shell command's output that runs a program cut to 2 KiB at arrival when over 3 KiB, spill, relevant preview), Collapse (blocks of 8+ lines the model already sees become one marker), TurnBudget (24,000 chars before the final round, floor 1,200), StuckPolicy (nudge 3, stop 6), CompactPolicy (old results cleared in one chunk once they add up to 12,000 tokens and the clear pays for its cache miss and the savings bank covers it, newest 4 rounds kept and, whole, the results the agent quoted in the 3 rounds before; 75% → 55% of the window in chunks of 10%; and, at a request after a pause longer than the cache lives, every old result the cost trigger may clear: catalog.CacheLifetime of the recorded model, never shorter than the cache the bench prices lives), toolselect.Selector once per turn (over 24 tools: top 20 by BM25 plus must-keep, the clients' own tools pinned: ClientTools); recall of stored results",
		Build: DefaultHarness().Build}
}

// anchorPresets are the rules of other systems, as their code documents
// them or as measured (anchors.go).
func anchorPresets() []Preset {
	return []Preset{harnessRSPreset(), claudeCodePreset(), codexPreset(), sweAgentPreset(), openHandsPreset(),
		crushPreset(), anthropicContextEditingPreset(), geminiCLIPreset(), opencodePreset()}
}

// ablationPresets vary harness's defaults one change at a time: a part
// left out (harness-no-…) or an idea measured against the default
// (harness+…, harness@…).
func ablationPresets() []Preset {
	abl := func(name, doc string, change func(*HarnessConfig)) Preset {
		h := DefaultHarness()
		change(&h)
		return Preset{Name: name, Doc: doc, Ablation: true, Build: h.Build}
	}
	return append([]Preset{
		abl("harness-no-ceiling", "harness without the per-result ceilings (no ResultPolicy, no RunCeiling)", func(h *HarnessConfig) { h.Stack.NoCeiling, h.Stack.NoRunCeiling = true, true }),
		abl("harness-no-spill", "harness with the ceiling but no spill: oversized results keep a preview, the rest only in the store", func(h *HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{NoSpill: true} }),
		abl("harness-no-turnbudget", "harness without the per-turn evidence budget", func(h *HarnessConfig) { h.Stack.NoTurnBudget = true }),
		abl("harness-no-compact", "harness without compaction", func(h *HarnessConfig) { h.Stack.NoCompact = true }),
		abl("harness-no-sticky", "harness whose tool selection starts afresh every turn (toolselect.Selector.NoSticky): a turn's new list breaks the cached prefix of the whole conversation; the default before selections were kept across turns", func(h *HarnessConfig) { h.Reselect = true }),
		abl("harness+defer", "harness whose tool selection defers the tools the first turn does not select (toolselect.Selector.Defer), the clients' own tools pinned as in harness: the others (an MCP catalogue) are offered as stubs on every request, so the list never changes, and a deferred tool's first call is priced as one more round that returns its full schema; TopK stays 20, pinned tools included (the preset harness+defer+pin until the pins became the default)", func(h *HarnessConfig) { h.DeferTools = true }),
		abl("harness+settle-stubs", "harness whose kept tool list, when a turn's subject leaves it, settles on itself and the new turn's selection whole and every other tool as a stub (toolselect.Selector.SettleStubs) instead of every tool whole: the list still changes once, and the requests after it carry stubs; a stubbed tool's first call is priced as one more round that returns its full schema", func(h *HarnessConfig) { h.SettleStubs = true }),
		abl("harness-no-pin", "harness whose tool selection pins none of the clients' own tools (no toolselect.Selector.Pinned): the kept list can leave out a client's shell or file reader, whose calls are then priced after a reveal round; the default until the pins were measured", func(h *HarnessConfig) { h.Pinned = nil }),
		abl("harness-no-toolselect", "harness offering every tool on every request (no per-turn tool selection)", func(h *HarnessConfig) { h.Selector = false }),
		abl("harness+dedupe", "harness with repeat suppression of identical read-only calls from the 2nd call", func(h *HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{Dedupe: guard.Dedupe{From: 2}} }),
		abl("harness+dedupe3", "harness with repeat suppression from the 3rd identical call", func(h *HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{Dedupe: guard.Dedupe{From: 3}} }),
		abl("harness@8k", "harness with an 8 KiB ceiling instead of 24 KiB (a measured proposal, not the default)", func(h *HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{MaxBytes: 8 << 10} }),
		abl("harness-no-collapse", "harness without guard.Collapse (the default until collapse was measured: 0.226 → 0.178 on the suite, 0.807 → 0.788 on the mini-swe-agent runs at equal retention)", func(h *HarnessConfig) { h.Stack.NoCollapse = true }),
		abl("harness-no-relevance", "harness whose spilled results get the head+tail preview (first 3 KiB, last 1 KiB) instead of guard.Relevant (1.5 KiB head, 1 KiB tail and 1.5 KiB of the lines matching the call's arguments, the agent's reasoning and the turn's input): the default before the relevant preview was measured", func(h *HarnessConfig) { h.Stack.Ceiling = headTailResults() }),
		abl("harness+finaltools", "harness with harness.Options.KeepToolsOnFinal: the synthesis call (after the round limit or a stop) still sends the tool schemas, calls forbidden by tool_choice none, so it keeps the cached prefix", func(h *HarnessConfig) { h.FinalTools = true }),
		abl("harness-no-clearold", "harness whose compaction clears only near the window (75% → 55%), without the cost trigger (CompactPolicy.NoClearOld): the default before it was measured", func(h *HarnessConfig) { h.NoClearOld = true }),
		abl("harness-no-bank", "harness whose clears for cost need only be expected to repay their cache miss (CompactPolicy.Unbounded): without the savings bank a clear late in a run can make it cost more than keeping everything; the default before the bank", func(h *HarnessConfig) { h.Unbounded = true }),
		abl("harness+quoted", "harness whose clears keep, below each placeholder, the lines of the result the agent had quoted by the clear's mark, with 3 lines of context (policy.CompactPolicy.KeepQuoted)", func(h *HarnessConfig) { h.Quoted = true }),
		abl("harness+active", "harness whose clears for cost keep the newest 3 rounds instead of 4 (ClearOldKeepRounds 3) and read 2 rounds for the results the agent is working with instead of 3 (ActiveRounds 2)", func(h *HarnessConfig) {
			h.Active, h.ClearOldKeep = 2, 3
		}),
		abl("harness+active/3", "harness+active reading the 3 rounds before the clear (ActiveRounds 3)", func(h *HarnessConfig) { h.Active, h.ClearOldKeep = 3, 3 }),
		abl("harness+active/24k", "harness+active clearing old results once they add up to 24,000 tokens instead of 12,000", func(h *HarnessConfig) {
			h.Active, h.ClearOldKeep, h.ClearOld = 2, 3, 24_000
		}),
		abl("harness+active+quoted", "harness+active whose cleared results also keep the lines the agent had quoted (policy.CompactPolicy.KeepQuoted)", func(h *HarnessConfig) {
			h.Active, h.ClearOldKeep, h.Quoted = 2, 3, true
		}),
		abl("harness+clearold/6k", "harness clearing old results once they add up to 6,000 tokens instead of 12,000", func(h *HarnessConfig) { h.ClearOld = 6_000 }),
		abl("harness+clearold/24k", "harness clearing old results once they add up to 24,000 tokens instead of 12,000", func(h *HarnessConfig) { h.ClearOld = 24_000 }),
		abl("harness+arrival", "harness whose turn budget is decided as each round arrives (policy.OnArrival): a round's results share what the turn has left less room for the rounds to come, the newest round whole while the model chooses its next call, each trim repaying its rewrite, so a request answered with tools still offered stays within the budget too", func(h *HarnessConfig) { h.Stack.TurnBudget = &policy.TurnBudget{When: policy.OnArrival} }),
		abl("harness+lowwater", "harness whose compaction clears old results in chunks once a request reaches 24,000 tokens (down to 12,000, chunks of 8,000, newest 3 rounds kept) instead of at 75% of the window", func(h *HarnessConfig) { h.ClearAt = 24_000 }),
		abl("harness-no-runceiling", "harness without guard.RunCeiling (stack.Config.NoRunCeiling): a program's output gets the 24 KiB ceiling like any result", func(h *HarnessConfig) { h.Stack.NoRunCeiling = true }),
		abl("harness-no-keepactive", "harness whose clears for cost take every old result, the ones the agent is working with too (CompactPolicy.NoKeepActive)", func(h *HarnessConfig) { h.NoActive = true }),
		abl("harness-no-stuck", "harness without policy.StuckPolicy (stack.Config.NoStuck): no nudge and no stop when a turn repeats its calls; a replay cannot show what a nudge changes, only what it costs", func(h *HarnessConfig) { h.Stack.NoStuck = true }),
		abl("harness-no-idle", "harness without the clear when idle (CompactPolicy.NoClearWhenIdle, harness run --clear-when-idle off): the default before it was measured; harness clears old results at a request after a pause longer than the recorded model's provider guarantees its prompt cache (catalog.CacheLifetime: 5 min for claude-*, 1 h for gpt-*, o1/o3/o4 and codex-*, off otherwise), since such a clear breaks no warm cache", func(h *HarnessConfig) { h.NoClearIdle = true }),
		{Name: "harness@previous", Doc: "harness's defaults before the run ceiling, the working set and the clear when idle: no RunCeiling, clears for cost take every result older than the newest 8 rounds, no clear after a pause (NoRunCeiling, NoKeepActive, ClearOldKeepRounds 8, NoClearWhenIdle)", Ablation: true, Build: previousHarness().Build},
	}, clearFromPresets(abl)...)
}

// References returns the presets that are bounds, not policies, run by
// default after the policies (and only when named in a list):
//
//   - "floor" shows every tool result as an empty string: the cost no
//     result policy can go under (the model still reads the system prompt,
//     the inputs and its own messages, and writes its output);
//   - "oracle" knows the future: the results the agent will use (those a
//     needle comes from, see replay.Needles) are shown whole, every other
//     result empty. It is what a policy that knew which results matter
//     would cost at 100% visible evidence, so "removed" between floor and
//     oracle is the price of not knowing.
func References() []Preset {
	return []Preset{
		{Name: "floor", Doc: "a bound, not a policy: every tool result shown as an empty string (marked truncated), the least any policy on tool results could cost",
			Build: func(replay.Env) (*replay.Config, error) {
				return &replay.Config{Guards: []harness.Guard{emptyResults}}, nil
			}},
		{Name: "oracle", Doc: "a bound that knows the future, not a policy: the results the agent will use (where a needle comes from) shown whole, every other result as an empty string; 100% visible at the least cost of keeping used results whole",
			Build: func(env replay.Env) (*replay.Config, error) {
				used := map[string]bool{}
				for _, n := range env.Needles {
					used[n.CallID] = true
				}
				return &replay.Config{Guards: []harness.Guard{emptyUnless("oracle", used)}}, nil
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

// currentName maps an ablation's former name, which read as a feature
// ("harness-compact" was harness without compaction), to its name; other
// names are returned as they are.
func currentName(name string) string {
	if n, ok := map[string]string{
		"harness-ceiling": "harness-no-ceiling", "harness-spill": "harness-no-spill", "harness-turnbudget": "harness-no-turnbudget",
		"harness-compact": "harness-no-compact", "harness-toolselect": "harness-no-toolselect", "harness-collapse": "harness-no-collapse",
		"harness-relevance": "harness-no-relevance", "harness-clearold": "harness-no-clearold",
	}[name]; ok {
		return n
	}
	return name
}

// Lookup returns the preset or reference called name; an ablation's
// former name (harness-compact for harness-no-compact) still finds it.
func Lookup(name string) (Preset, error) {
	name = currentName(name)
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

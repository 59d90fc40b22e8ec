// Package benchlab holds the bench's experiments: the ablations and ideas
// measured against harness's defaults (harness-no-…, harness+…, harness@…)
// and the research tests that chose the defaults, on the bench's replay
// core (internal/benchcore). The product's bench compares harness with the
// other systems' documented rules and the bounds; the lab adds these.
package benchlab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/lab/compactrules"
	"github.com/agentharness/harness/policy"
)

// Preset is a bench preset (see benchcore.Preset).
type Preset = benchcore.Preset

// Presets returns the lab's presets: harness's ablations and ideas.
func Presets() []Preset {
	return append(append(append(append(append(append(append(append(ablations(), feedbackPresets()...), outlinePresets()...), latePresets()...), kindPresets()...), paysPresets()...), readHeadPresets()...), rereadStopPreset()), append(append(append(rereadBankPresets(), neverUsedPresets()...), ownPricePresets()...), namedPresets()...)...)
}

// Lookup returns the lab's preset called name, or the product's (a
// preset, a reference); an ablation's former name (harness-compact for
// harness-no-compact) still finds it.
func Lookup(name string) (Preset, error) {
	name = currentName(name)
	ps := Presets()
	if i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name }); i >= 0 {
		return ps[i], nil
	}
	p, err := benchcore.Lookup(name)
	if err != nil {
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		return Preset{}, fmt.Errorf("%w; the lab has %s", err, strings.Join(names, ", "))
	}
	return p, nil
}

// previousHarness is the default before the run ceiling, the working
// set: no RunCeiling, every old result cleared, 8 rounds kept.
func previousHarness() benchcore.HarnessConfig {
	h := benchcore.DefaultHarness()
	h.Stack.NoRunCeiling, h.NoActive, h.ClearOldKeep, h.NoClearIdle = true, true, 8, true
	return h
}

// ablations vary harness's defaults one change at a time: a part
// left out (harness-no-…) or an idea measured against the default
// (harness+…, harness@…).
func ablations() []benchcore.Preset {
	abl := func(name, doc string, change func(*benchcore.HarnessConfig)) benchcore.Preset {
		h := benchcore.DefaultHarness()
		change(&h)
		return benchcore.Preset{Name: name, Doc: doc, Ablation: true, Build: h.Build}
	}
	return append([]benchcore.Preset{
		abl("harness-no-ceiling", "harness without the per-result ceilings (no ResultPolicy, no RunCeiling)", func(h *benchcore.HarnessConfig) { h.Stack.NoCeiling, h.Stack.NoRunCeiling = true, true }),
		abl("harness-no-spill", "harness with the ceiling but no spill: oversized results keep a preview, the rest only in the store", func(h *benchcore.HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{NoSpill: true} }),
		abl("harness-no-turnbudget", "harness without the per-turn evidence budget", func(h *benchcore.HarnessConfig) { h.Stack.NoTurnBudget = true }),
		abl("harness-no-compact", "harness without compaction", func(h *benchcore.HarnessConfig) { h.Stack.NoCompact = true }),
		abl("harness-no-sticky", "harness whose tool selection starts afresh every turn (toolselect.Selector.NoSticky): a turn's new list breaks the cached prefix of the whole conversation; the default before selections were kept across turns", func(h *benchcore.HarnessConfig) { h.Reselect = true }),
		abl("harness+defer", "harness whose tool selection defers the tools the first turn does not select (toolselect.Selector.Defer), the clients' own tools pinned as in harness: the others (an MCP catalogue) are offered as stubs on every request, so the list never changes, and a deferred tool's first call is priced as one more round that returns its full schema; TopK stays 20, pinned tools included (the preset harness+defer+pin until the pins became the default)", func(h *benchcore.HarnessConfig) { h.DeferTools = true }),
		abl("harness+settle-stubs", "harness whose kept tool list, when a turn's subject leaves it, settles on itself and the new turn's selection whole and every other tool as a stub (toolselect.Selector.SettleStubs) instead of every tool whole: the list still changes once, and the requests after it carry stubs; a stubbed tool's first call is priced as one more round that returns its full schema", func(h *benchcore.HarnessConfig) { h.SettleStubs = true }),
		abl("harness-no-pin", "harness whose tool selection pins none of the clients' own tools (no toolselect.Selector.Pinned): the kept list can leave out a client's shell or file reader, whose calls are then priced after a reveal round; the default until the pins were measured", func(h *benchcore.HarnessConfig) { h.Pinned = nil }),
		abl("harness-no-toolselect", "harness offering every tool on every request (no per-turn tool selection)", func(h *benchcore.HarnessConfig) { h.Selector = false }),
		abl("harness+dedupe", "harness with repeat suppression of identical read-only calls from the 2nd call", func(h *benchcore.HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{Dedupe: guard.Dedupe{From: 2}} }),
		abl("harness+dedupe3", "harness with repeat suppression from the 3rd identical call", func(h *benchcore.HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{Dedupe: guard.Dedupe{From: 3}} }),
		abl("harness@8k", "harness with an 8 KiB ceiling instead of 24 KiB (a measured proposal, not the default)", func(h *benchcore.HarnessConfig) { h.Stack.Ceiling = &guard.ResultPolicy{MaxBytes: 8 << 10} }),
		abl("harness-no-collapse", "harness without guard.Collapse (the default until collapse was measured: 0.226 → 0.178 on the suite, 0.807 → 0.788 on the mini-swe-agent runs at equal retention)", func(h *benchcore.HarnessConfig) { h.Stack.NoCollapse = true }),
		abl("harness-no-relevance", "harness whose spilled results get the head+tail preview (first 3 KiB, last 1 KiB) instead of guard.Relevant (1.5 KiB head, 1 KiB tail and 1.5 KiB of the lines matching the call's arguments, the agent's reasoning and the turn's input): the default before the relevant preview was measured", func(h *benchcore.HarnessConfig) { h.Stack.Ceiling = headTailResults() }),
		abl("harness+finaltools", "harness with harness.Options.KeepToolsOnFinal: the synthesis call (after the round limit or a stop) still sends the tool schemas, calls forbidden by tool_choice none, so it keeps the cached prefix", func(h *benchcore.HarnessConfig) { h.FinalTools = true }),
		abl("harness-no-clearold", "harness whose compaction clears only near the window (75% → 55%), without the cost trigger (CompactPolicy.NoClearOld): the default before it was measured", func(h *benchcore.HarnessConfig) { h.NoClearOld = true }),
		abl("harness-no-bank", "harness whose clears for cost need only be expected to repay their cache miss (CompactPolicy.Unbounded): without the savings bank a clear late in a run can make it cost more than keeping everything; the default before the bank", func(h *benchcore.HarnessConfig) { h.Unbounded = true }),
		abl("harness+quoted", "harness whose clears keep, below each placeholder, the lines of the result the agent had quoted by the clear's mark, with 3 lines of context (compactrules.KeepQuoted)", func(h *benchcore.HarnessConfig) { h.Rule = compactrules.KeepQuoted(3) }),
		abl("harness+active", "harness whose clears for cost keep the newest 3 rounds instead of 4 (ClearOldKeepRounds 3) and read 2 rounds for the results the agent is working with instead of 3 (ActiveRounds 2)", func(h *benchcore.HarnessConfig) {
			h.Active, h.ClearOldKeep = 2, 3
		}),
		abl("harness+active/r1", "harness whose working-set rule reads the newest round before a clear only (ActiveRounds 1)", func(h *benchcore.HarnessConfig) { h.Active = 1 }),
		abl("harness+active/r2", "harness whose working-set rule reads the 2 newest rounds before a clear (ActiveRounds 2)", func(h *benchcore.HarnessConfig) { h.Active = 2 }),
		abl("harness+active/3", "harness+active reading the 3 rounds before the clear (ActiveRounds 3)", func(h *benchcore.HarnessConfig) { h.Active, h.ClearOldKeep = 3, 3 }),
		abl("harness+active/24k", "harness+active clearing old results once they add up to 24,000 tokens instead of 12,000", func(h *benchcore.HarnessConfig) {
			h.Active, h.ClearOldKeep, h.ClearOld = 2, 3, 24_000
		}),
		abl("harness+active+quoted", "harness+active whose cleared results also keep the lines the agent had quoted (compactrules.KeepQuoted)", func(h *benchcore.HarnessConfig) {
			h.Active, h.ClearOldKeep, h.Rule = 2, 3, compactrules.KeepQuoted(3)
		}),
		abl("harness+clearold/6k", "harness clearing old results once they add up to 6,000 tokens instead of 12,000", func(h *benchcore.HarnessConfig) { h.ClearOld = 6_000 }),
		abl("harness+clearold/24k", "harness clearing old results once they add up to 24,000 tokens instead of 12,000", func(h *benchcore.HarnessConfig) { h.ClearOld = 24_000 }),
		abl("harness+arrival", "harness whose turn budget is decided as each round arrives (policy.OnArrival): a round's results share what the turn has left less room for the rounds to come, the newest round whole while the model chooses its next call, each trim repaying its rewrite, so a request answered with tools still offered stays within the budget too", func(h *benchcore.HarnessConfig) { h.Stack.TurnBudget = &policy.TurnBudget{When: policy.OnArrival} }),
		abl("harness+lowwater", "harness whose compaction clears old results in chunks once a request reaches 24,000 tokens (down to 12,000, chunks of 8,000, newest 3 rounds kept) instead of at 75% of the window", func(h *benchcore.HarnessConfig) { h.ClearAt = 24_000 }),
		abl("harness-no-runceiling", "harness without guard.RunCeiling (stack.Config.NoRunCeiling): a program's output gets the 24 KiB ceiling like any result", func(h *benchcore.HarnessConfig) { h.Stack.NoRunCeiling = true }),
		abl("harness-no-keepactive", "harness whose clears for cost take every old result, the ones the agent is working with too (CompactPolicy.NoKeepActive)", func(h *benchcore.HarnessConfig) { h.NoActive = true }),
		abl("harness-no-stuck", "harness without policy.StuckPolicy (stack.Config.NoStuck): no nudge and no stop when a turn repeats its calls; a replay cannot show what a nudge changes, only what it costs", func(h *benchcore.HarnessConfig) { h.Stack.NoStuck = true }),
		abl("harness-no-idle", "harness without the clear when idle (CompactPolicy.NoClearWhenIdle, harness run --clear-when-idle off): the default before it was measured; harness clears old results at a request after a pause longer than the recorded model's provider guarantees its prompt cache (catalog.CacheLifetime: 5 min for claude-*, 1 h for gpt-*, o1/o3/o4 and codex-*, off otherwise), since such a clear breaks no warm cache", func(h *benchcore.HarnessConfig) { h.NoClearIdle = true }),
		{Name: "harness@previous", Doc: "harness's defaults before the run ceiling, the working set and the clear when idle: no RunCeiling, clears for cost take every result older than the newest 8 rounds, no clear after a pause (NoRunCeiling, NoKeepActive, ClearOldKeepRounds 8, NoClearWhenIdle)", Ablation: true, Build: previousHarness().Build},
	}, clearFromPresets(abl)...)
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

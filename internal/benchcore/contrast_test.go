package benchcore

import (
	"fmt"

	"github.com/agentharness/harness/policy"
)

// contrasts are harness's defaults with one change each, by name: what the
// tests here measure a default against (the lab's bench holds every
// ablation and idea; these are the few the product's tests need).
func contrasts() map[string]func(*HarnessConfig) {
	return map[string]func(*HarnessConfig){
		"harness-no-toolselect": func(h *HarnessConfig) { h.Selector = false },
		"harness-no-sticky":     func(h *HarnessConfig) { h.Reselect = true },
		"harness+defer":         func(h *HarnessConfig) { h.DeferTools = true },
		"harness-no-pin":        func(h *HarnessConfig) { h.Pinned = nil },
		"harness-no-idle":       func(h *HarnessConfig) { h.NoClearIdle = true },
		"harness-no-collapse":   func(h *HarnessConfig) { h.Stack.NoCollapse = true },
		"harness+finaltools":    func(h *HarnessConfig) { h.FinalTools = true },
		"harness-no-turnbudget": func(h *HarnessConfig) { h.Stack.NoTurnBudget = true },
		"harness+arrival": func(h *HarnessConfig) {
			h.Stack.TurnBudget = &policy.TurnBudget{When: policy.OnArrival}
		},
		"harness@previous": previousHarness,
	}
}

// previousHarness is harness's defaults before the run ceiling, the
// working set and the clear when idle: no RunCeiling, every old result
// cleared, 8 rounds kept, no clear after a pause.
func previousHarness(h *HarnessConfig) {
	h.Stack.NoRunCeiling, h.NoActive, h.ClearOldKeep, h.NoClearIdle = true, true, 8, true
}

// lookupContrast returns the contrast called name as an ablation preset,
// or Lookup(name).
func lookupContrast(name string) (Preset, error) {
	change, ok := contrasts()[name]
	if !ok {
		return Lookup(name)
	}
	h := DefaultHarness()
	change(&h)
	return Preset{Name: name, Doc: fmt.Sprintf("harness with one change (%s)", name), Ablation: true, Build: h.Build}, nil
}

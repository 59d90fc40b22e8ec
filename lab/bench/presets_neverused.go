package benchlab

import (
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
)

// neverUsedPresets aim at the results the agent never uses on the
// mini-swe-agent sets (the notebook's "Never-used results on the deepseek
// sets"): most of that cost is in outputs under 4,000 characters shown
// whole to the end, which no clear for cost can afford there (when the
// trigger fires the savings bank holds a third to a fifth of the clear's
// cache miss), so these cut at arrival, where a cut costs no miss and
// funds the bank: the run ceiling (a program's output: tests, scripts,
// installs) cut from a lower size to a smaller preview, with spill.
func neverUsedPresets() []Preset {
	var out []Preset
	for _, c := range []struct {
		name          string
		max, min      int
		ceiling, from string
	}{
		{"harness+runceiling/1k", 1 << 10, 3 << 9, "1 KiB", "1.5 KiB"},
		{"harness+runceiling/512", 1 << 9, 1 << 10, "512 bytes", "1 KiB"},
	} {
		h := benchcore.DefaultHarness()
		h.Stack.RunCeiling = &guard.RunCeiling{MaxBytes: c.max, MinBytes: c.min}
		out = append(out, Preset{Name: c.name, Ablation: true, Build: h.Build,
			Doc: "harness whose run ceiling cuts a program's output over " + c.from + " to a " + c.ceiling + " relevant preview with spill (the default: over 3 KiB to 2 KiB)"})
	}
	return out
}

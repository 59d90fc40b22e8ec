package benchlab

import (
	"fmt"

	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/lab/compactrules"
)

// clearFromPresets are the ideas of compactrules.ClearFrom and
// KeepPreviews: clears for cost that leave results under a size, or the
// ceiling's previews, whole, at the default trigger and at 6,000 tokens
// (a clear that hides less could clear more often).
func clearFromPresets(abl func(name, doc string, change func(*benchcore.HarnessConfig)) Preset) []Preset {
	var out []Preset
	for _, from := range []int{500, 1000, 2000} {
		out = append(out, abl(fmt.Sprintf("harness+clearfrom/%d", from),
			fmt.Sprintf("harness whose clears for cost take only results of at least %d tokens (compactrules.ClearFrom); smaller ones stay whole until the window's clear", from),
			func(h *benchcore.HarnessConfig) { h.Rule = compactrules.ClearFrom(from) }))
	}
	for _, from := range []int{1000, 2000} {
		out = append(out, abl(fmt.Sprintf("harness+clearfrom/%d@6k", from),
			fmt.Sprintf("harness+clearfrom/%d with the cost trigger at 6,000 tokens instead of 12,000", from),
			func(h *benchcore.HarnessConfig) { h.Rule, h.ClearOld = compactrules.ClearFrom(from), 6_000 }))
	}
	out = append(out,
		abl("harness+keeppreviews", "harness whose clears for cost leave whole the results the ceiling cut to a preview (compactrules.KeepPreviews); the window's clear takes them",
			func(h *benchcore.HarnessConfig) { h.Rule = compactrules.KeepPreviews() }),
		abl("harness+keeppreviews@6k", "harness+keeppreviews with the cost trigger at 6,000 tokens instead of 12,000",
			func(h *benchcore.HarnessConfig) { h.Rule, h.ClearOld = compactrules.KeepPreviews(), 6_000 }))
	return out
}

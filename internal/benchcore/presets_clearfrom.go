package benchcore

import "fmt"

// clearFromPresets are the ideas of CompactPolicy.ClearFrom and
// KeepPreviews: clears for cost that leave results under a size, or the
// ceiling's previews, whole, at the default trigger and at 6,000 tokens
// (a clear that hides less could clear more often).
func clearFromPresets(abl func(name, doc string, change func(*HarnessConfig)) Preset) []Preset {
	var out []Preset
	for _, from := range []int{500, 1000, 2000} {
		out = append(out, abl(fmt.Sprintf("harness+clearfrom/%d", from),
			fmt.Sprintf("harness whose clears for cost take only results of at least %d tokens (policy.CompactPolicy.ClearFrom); smaller ones stay whole until the window's clear", from),
			func(h *HarnessConfig) { h.ClearFrom = from }))
	}
	for _, from := range []int{1000, 2000} {
		out = append(out, abl(fmt.Sprintf("harness+clearfrom/%d@6k", from),
			fmt.Sprintf("harness+clearfrom/%d with the cost trigger at 6,000 tokens instead of 12,000", from),
			func(h *HarnessConfig) { h.ClearFrom, h.ClearOld = from, 6_000 }))
	}
	out = append(out,
		abl("harness+keeppreviews", "harness whose clears for cost leave whole the results the ceiling cut to a preview (policy.CompactPolicy.KeepPreviews); the window's clear takes them",
			func(h *HarnessConfig) { h.KeepPreviews = true }),
		abl("harness+keeppreviews@6k", "harness+keeppreviews with the cost trigger at 6,000 tokens instead of 12,000",
			func(h *HarnessConfig) { h.KeepPreviews, h.ClearOld = true, 6_000 }))
	return out
}

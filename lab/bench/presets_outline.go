package benchlab

import (
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
)

// outlinePresets are harness's defaults with a spilled source file's
// preview spent on its outline (outlinePreview) instead of
// guard.Relevant's head, matching lines and tail; every other result
// keeps guard.Relevant's preview.
func outlinePresets() []Preset {
	p := func(name, doc string, pv outlinePreview) Preset {
		h := benchcore.DefaultHarness()
		h.Stack.Ceiling = &guard.ResultPolicy{Preview: pv}
		return Preset{Name: name, Doc: doc, Ablation: true, Build: h.Build}
	}
	return []Preset{
		p("harness+outline", "harness whose spilled source files (a file reader's or a shell's cat/sed/nl/head/tail of a file with a code extension, or content that declares enough) show their outline in the 4 KiB preview: the lines declaring functions, methods, types and names, top-level first, each gap naming the lines left out; what the outline leaves extends the head", outlinePreview{}),
		p("harness+outline/ht", "harness+outline keeping the file's first 1 KiB and last 512 bytes before the outline", outlinePreview{head: 1 << 10, tail: 512}),
		p("harness+outline@8k", "harness+outline with an 8 KiB preview for source files", outlinePreview{size: 8 << 10}),
		p("harness+outline/rel", "harness whose spilled source files show guard.Relevant's excerpt in 3 KiB (its head, tail and matching lines, shares scaled) and their outline in the last 1 KiB of the 4 KiB preview", outlinePreview{relevant: 3 << 10}),
		p("harness+outline/rel@6k", "harness whose spilled source files show guard.Relevant's 4 KiB excerpt and their outline in 2 KiB more (a 6 KiB preview)", outlinePreview{relevant: 4 << 10, size: 6 << 10}),
		p("harness+outline+imports", "harness+outline whose outline also shows the file's import statements, after its top-level declarations", outlinePreview{imports: true}),
		p("harness+outline/ht+imports", "harness+outline/ht whose outline also shows the file's import statements", outlinePreview{head: 1 << 10, tail: 512, imports: true}),
		p("harness+outline/ht@6k", "harness+outline/ht with a 6 KiB preview for source files", outlinePreview{head: 1 << 10, tail: 512, size: 6 << 10}),
	}
}

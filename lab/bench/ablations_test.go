package benchlab

import (
	"testing"

	"github.com/agentharness/harness/internal/benchcore"
)

// TestLabPresets: every lab preset is named once, documented, buildable,
// labelled an ablation or an idea, and not one of the product's presets;
// Lookup finds the lab's and the product's.
func TestLabPresets(t *testing.T) {
	product := map[string]bool{}
	for _, p := range append(benchcore.Presets(), benchcore.References()...) {
		product[p.Name] = true
	}
	seen := map[string]bool{}
	for _, p := range Presets() {
		k := benchcore.Kind(p.Name)
		if p.Doc == "" || p.Build == nil || seen[p.Name] || product[p.Name] || !p.Ablation || (k != benchcore.KindAblation && k != benchcore.KindIdea) {
			t.Errorf("lab preset %q: doc %q, repeated %v, in the product %v, ablation %v, kind %s", p.Name, p.Doc, seen[p.Name], product[p.Name], p.Ablation, k)
		}
		seen[p.Name] = true
	}
	for _, want := range []string{"harness-no-ceiling", "harness-no-spill", "harness-no-turnbudget", "harness-no-compact", "harness+dedupe", "harness+dedupe3", "harness@previous", "harness+clearfrom/500", "harness+feedback"} {
		if !seen[want] {
			t.Errorf("missing lab preset %s", want)
		}
	}
	for _, n := range []string{"harness-no-idle", "harness", "floor", "codex"} {
		if p, err := Lookup(n); err != nil || p.Name != n {
			t.Errorf("Lookup(%q) = %q, %v", n, p.Name, err)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown preset succeeded")
	}
}

// The former names of ablations still find them.
func TestFormerNamesAreAliases(t *testing.T) {
	for old, cur := range map[string]string{"harness-compact": "harness-no-compact", "harness-clearold": "harness-no-clearold", "harness-ceiling": "harness-no-ceiling"} {
		p, err := Lookup(old)
		if err != nil || p.Name != cur {
			t.Errorf("Lookup(%q) = %q, %v; want %q", old, p.Name, err, cur)
		}
	}
}

package bench

import (
	"context"
	"testing"
)

func TestResearchPresetsAreNamedAndDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range append(Presets(), References()...) {
		seen[p.Name] = true
	}
	for _, p := range Research() {
		if p.Doc == "" || p.build == nil || seen[p.Name] {
			t.Errorf("research preset %q: doc %q, clashes %v", p.Name, p.Doc, seen[p.Name])
		}
		seen[p.Name] = true
		if q, err := Lookup(p.Name); err != nil || q.Name != p.Name {
			t.Errorf("Lookup(%q): %v", p.Name, err)
		}
	}
}

// TestResearchOnSuite runs harness's defaults and the measured settling
// policy on the built-in suite: settling what the model has answered is
// cheaper at no loss of recoverable evidence.
func TestResearchOnSuite(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Preset
	for _, n := range []string{"harness", "harness+settle/runs"} {
		p, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	tab, err := Run(context.Background(), recs, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]Row{}
	for _, r := range tab.Rows {
		row[r.Preset] = r
	}
	h, settle := row["harness"], row["harness+settle/runs"]
	if settle.Effective >= h.Effective || settle.Recoverable != settle.Needles || settle.Visible < h.Visible || settle.AboveNone != 0 {
		t.Errorf("settle: %.0f effective (harness %.0f), visible %d (harness %d), recoverable %d/%d, above none %d",
			settle.Effective, h.Effective, settle.Visible, h.Visible, settle.Recoverable, settle.Needles, settle.AboveNone)
	}
}

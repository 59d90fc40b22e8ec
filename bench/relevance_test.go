package bench

import (
	"context"
	"testing"

	"github.com/agentharness/harness/guard"
)

// TestRelevancePresets runs the three harness+relevance ablations on the
// built-in suite: each uses guard.Relevant as its preview at its ceiling,
// costs no more than keeping everything, and keeps every needle
// recoverable through its spill files.
func TestRelevancePresets(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
	}{{"harness+relevance", guard.DefaultMaxBytes}, {"harness+relevance@8k", 8 << 10}, {"harness+relevance@12k", 12 << 10}} {
		p, err := Lookup(c.name)
		if err != nil || !p.Ablation {
			t.Fatalf("%s: %v (ablation %v)", c.name, err, p.Ablation)
		}
		rp := relevantResults(c.max)
		if _, ok := rp.Preview.(guard.ContextPreview); !ok || *rp.MaxBytes != c.max {
			t.Errorf("%s: preview %T, ceiling %d", c.name, rp.Preview, *rp.MaxBytes)
		}
	}
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Preset
	for _, n := range []string{"harness", "harness+relevance", "harness+relevance@8k", "harness+relevance@12k"} {
		p, _ := Lookup(n)
		ps = append(ps, p)
	}
	tab, err := Run(context.Background(), recs, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows[1:] {
		if r.Ratio > 1 || r.RecoverableShare != 1 || r.AboveNone != 0 {
			t.Errorf("%s: %.3f × none, recoverable %.3f, above none on %d", r.Preset, r.Ratio, r.RecoverableShare, r.AboveNone)
		}
	}
	// The lock file read: the agent asks for one package's version, the
	// line is in the middle of a file far over the ceiling; the relevant
	// preview shows it where the head+tail preview cannot.
	for _, run := range tab.Runs {
		if run.Recording != "lockfile" {
			continue
		}
		if ht, rel := run.Cells[1], run.Cells[2]; rel.VisibleShare < ht.VisibleShare || rel.VisibleShare != 1 {
			t.Errorf("lockfile: visible %.2f with head+tail, %.2f with the relevant preview", ht.VisibleShare, rel.VisibleShare)
		}
	}
}

package benchcore

import (
	"context"
	"testing"

	"github.com/agentharness/harness/guard"
)

// TestRelevanceAblation runs harness (whose ResultPolicy previews with
// guard.Relevant by default) against harness-no-relevance (head+tail) on the
// built-in suite: both cost no more than keeping everything and keep every
// needle recoverable, and on the lock file read — the agent asks for one
// package's version, whose line is in the middle of a file far over the
// ceiling — only the relevant preview shows it.
func TestRelevanceAblation(t *testing.T) {
	p, err := Lookup("harness-no-relevance")
	if err != nil || !p.Ablation {
		t.Fatalf("harness-no-relevance: %v (ablation %v)", err, p.Ablation)
	}
	if _, ok := headTailResults().Preview.(guard.HeadTail); !ok {
		t.Fatalf("the ablation's preview is %T", headTailResults().Preview)
	}
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var ps []Preset
	for _, n := range []string{"harness", "harness-no-relevance"} {
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
	found := false
	for _, run := range tab.Runs {
		if run.Recording != "lockfile" {
			continue
		}
		found = true
		if rel, ht := run.Cells[1], run.Cells[2]; rel.VisibleShare != 1 || ht.VisibleShare >= rel.VisibleShare {
			t.Errorf("lockfile: visible %.2f with the relevant preview, %.2f with head+tail", rel.VisibleShare, ht.VisibleShare)
		}
	}
	if !found {
		t.Fatal("no lockfile run in the table")
	}
}

package bench_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness/bench"
)

// TestPresetsArePolicies: the bench compares harness with the other
// systems' documented rules and the bounds; the experiments (ablations and
// ideas) are the lab's, so Lookup does not find them.
func TestPresetsArePolicies(t *testing.T) {
	var names []string
	for _, p := range append(bench.Presets(), bench.References()...) {
		names = append(names, p.Name)
		if p.Ablation || strings.HasPrefix(p.Name, "harness-no-") || strings.HasPrefix(p.Name, "harness+") || strings.HasPrefix(p.Name, "harness@") {
			t.Errorf("preset %q is an experiment", p.Name)
		}
	}
	for _, want := range []string{"none", "harness", "harness-proxy", "codex", "claude-code", "floor", "oracle"} {
		if _, err := bench.Lookup(want); err != nil || !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("preset %q: %v (presets %v)", want, err, names)
		}
	}
	if _, err := bench.Lookup("harness-no-compact"); err == nil {
		t.Error("Lookup found the ablation harness-no-compact")
	}
}

// TestRunEachMatchesRun: RunEach over Slice gives Run's table.
func TestRunEachMatchesRun(t *testing.T) {
	recs, err := bench.Suite()
	if err != nil {
		t.Fatal(err)
	}
	h, err := bench.Lookup("harness")
	if err != nil {
		t.Fatal(err)
	}
	opts := &bench.Options{Presets: []bench.Preset{h}, Workers: 2}
	tab, err := bench.Run(context.Background(), recs[:2], opts)
	if err != nil {
		t.Fatal(err)
	}
	each, err := bench.RunEach(context.Background(), bench.Slice(recs[:2]), 2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.Rows[0].Preset != "none" || tab.Rows[1].Preset != "harness" || !reflect.DeepEqual(tab, each) {
		t.Errorf("Run rows %+v; RunEach equal %v", tab.Rows, reflect.DeepEqual(tab, each))
	}
}

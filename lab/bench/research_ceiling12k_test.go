package benchlab

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/replay"
)

// TestResearchCeiling12k prints, per set of HARNESS_RESEARCH_SETS
// (colon-separated folders), harness, harness with a 12 KiB ceiling
// ("harness@12k", all else harness's) and codex: × none and × none with
// re-reads priced under each price model, the recovery rounds, the lost
// needles and the recordings above 1.01 × none with re-reads priced under
// any price model (lab/NOTEBOOK.md, "Where the re-reads come from").
func TestResearchCeiling12k(t *testing.T) {
	sets := os.Getenv("HARNESS_RESEARCH_SETS")
	if sets == "" {
		t.Skip("HARNESS_RESEARCH_SETS not set")
	}
	h := benchcore.DefaultHarness()
	h.Stack.Ceiling = &guard.ResultPolicy{MaxBytes: 12 << 10}
	ps := []benchcore.Preset{{Name: "harness@12k", Doc: "research variant", Build: h.Build}}
	for _, name := range []string{"harness", "codex", "floor"} {
		p, err := benchcore.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, dir := range filepath.SplitList(sets) {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		o, err := researchCacheOptions()
		if err != nil {
			t.Fatal(err)
		}
		o.Presets = ps
		tab, err := benchcore.Run(context.Background(), recs, &o)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range tab.Rows {
			above := 0
			for _, run := range tab.Runs {
				for _, x := range run.Cells[i].RatiosWithRecovery {
					if x > benchcore.Tolerance {
						above++
						break
					}
				}
			}
			t.Logf("%s (%d) %-12s × none %v with re-reads %v rounds %d lost %d above 1.01 %d",
				filepath.Base(dir), len(recs), r.Preset, r.Ratios, r.RatiosWithRecovery, r.RecoveryRounds, r.LostNeedles, above)
		}
	}
}

package benchlab

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/internal/benchcore"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
)

// TestResearchRunCeiling replays the sets named by HARNESS_RESEARCH_SETS
// under harness and harness with guard.RunCeiling at several ceilings and
// previews, with floor for the removed share, and prints each variant's
// figures per set (docs/design.md, "Where the removable cost is"), the
// cache priced as researchCacheOptions says.
func TestResearchRunCeiling(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	variant := func(name string, rc *guard.RunCeiling) benchcore.Preset {
		h := benchcore.DefaultHarness()
		if rc != nil {
			h.Stack.Inner = []harness.Guard{rc.Guard()}
		}
		return benchcore.Preset{Name: name, Doc: "research variant", Build: h.Build}
	}
	floor, _ := benchcore.Lookup("floor")
	ps := []benchcore.Preset{floor, variant("harness", nil)}
	for _, kb := range []int{1, 2, 4} {
		ps = append(ps, variant(fmt.Sprintf("run%dk", kb), &guard.RunCeiling{MaxBytes: kb << 10}))
		ps = append(ps, variant(fmt.Sprintf("run%dk-headtail", kb), &guard.RunCeiling{MaxBytes: kb << 10, Preview: guard.HeadTail{Head: 1, Tail: 3}}))
	}
	var b strings.Builder
	for _, dir := range strings.Split(dirs, ",") {
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
		for _, r := range tab.Rows[2:] {
			fmt.Fprintf(&b, "%-30s %-18s %.3f/%.3f × none, removed %.1f%%/%.1f%%, visible %.1f%%, > 1.01× %d, worst %.3f\n", filepath.Base(dir), r.Preset,
				r.Ratios["openai"], r.Ratios["anthropic"], 100*r.Removed["openai"], 100*r.Removed["anthropic"], 100*r.VisibleShare, r.AboveTolerance, r.Worst)
		}
	}
	t.Log("\n" + b.String())
}

package proxylab_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentharness/harness/replay"
)

// TestResearchRequestPace prints, per set of HARNESS_RESEARCH_SETS, how
// far apart a recorded agent's model calls are (the time between two
// responses of one recording: the model's time and the tools'), the pace
// the gateway's load test stands in for with HARNESS_LOAD_MODEL_MS. Gaps
// over five minutes (a person away, a session resumed) are left out.
func TestResearchRequestPace(t *testing.T) {
	sets := os.Getenv("HARNESS_RESEARCH_SETS")
	if sets == "" {
		t.Skip("HARNESS_RESEARCH_SETS not set")
	}
	for _, set := range filepath.SplitList(sets) {
		var gaps []time.Duration
		runs := 0
		_, err := replay.LoadEach(context.Background(), nil, []string{set}, func(rec *replay.Recording) error {
			runs++
			var prev time.Time
			for _, turn := range rec.Turns {
				for _, c := range turn.Calls {
					if c.Time.IsZero() {
						continue
					}
					if g := c.Time.Sub(prev); !prev.IsZero() && g > 0 && g <= 5*time.Minute {
						gaps = append(gaps, g)
					}
					prev = c.Time
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(gaps) == 0 {
			t.Logf("%s: %d recordings, no call times", set, runs)
			continue
		}
		slices.Sort(gaps)
		q := func(f float64) time.Duration { return gaps[int(f*float64(len(gaps)-1))].Round(10 * time.Millisecond) }
		t.Logf("%s: %d recordings, %d gaps between responses: p10 %s, p25 %s, p50 %s, p75 %s, p90 %s",
			set, runs, len(gaps), q(.1), q(.25), q(.5), q(.75), q(.9))
	}
}

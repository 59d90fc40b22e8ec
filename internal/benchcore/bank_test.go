package benchcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// randomRun is a coding run of one turn and rounds rounds, each a shell
// call whose output is mostly short, sometimes long and now and then very
// long (a heavy tail, as in the recorded runs), then an answer.
func randomRun(t *testing.T, seed uint64, rounds int) *replay.Recording {
	t.Helper()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	s := &scenario{rng: rand.New(rand.NewPCG(seed, 0xba4c)), counter: bpe}
	s.start(fmt.Sprintf("random-%d", seed), codingSys, "Fix the failing test in the workspace.", bashTool)
	for r := range rounds {
		n := 100 + s.rng.IntN(2_000)
		switch x := s.rng.IntN(20); {
		case x == 0:
			n = 15_000 + s.rng.IntN(60_000)
		case x < 6:
			n = 2_000 + s.rng.IntN(15_000)
		}
		s.step(s.prose(80+s.rng.IntN(400)), callSpec{tool: "bash", args: fmt.Sprintf(`{"command":"step %d"}`, r), output: s.prose(n)})
	}
	s.step("The test passes now: " + s.prose(200))
	return s.rec
}

// TestBankBoundsEveryRun replays random runs of lengths from 10 to 109
// rounds under the harness preset and checks the savings bank's promise: no
// run costs more than keeping everything, under any price model, wherever
// it ends. Without the bank, the previous default's clears for cost (every
// result older than 8 rounds) lose on some of the same runs (random-26:
// 1.117 × none under Anthropic's prices), so the test can tell; random-30
// grows past 75% of the window, whose clearing the bank holds back while
// the request still fits. (The default's own clears, which keep the
// results the agent is working with, happen to lose on none of these runs
// without the bank.)
func TestBankBoundsEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 12 random runs")
	}
	var recs []*replay.Recording
	for seed := uint64(20); seed < 32; seed++ {
		recs = append(recs, randomRun(t, seed, 10+int(seed%12)*9))
	}
	var ps []Preset
	for _, n := range []string{"harness", "harness@previous"} {
		p, _ := Lookup(n)
		ps = append(ps, p)
	}
	prev := previousHarness()
	prev.Unbounded = true
	ps = append(ps, Preset{Name: "previous-no-bank", Ablation: true, Build: prev.Build})
	tab, err := Run(context.Background(), recs, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		preset    string
		wantAbove bool // some run above none under some price model
	}{
		{"harness", false},
		{"harness@previous", false},
		{"previous-no-bank", true},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			col := -1
			for i, r := range tab.Rows {
				if r.Preset == tc.preset {
					col = i
				}
			}
			above, worst := 0, 0.0
			for _, run := range tab.Runs {
				for name, c := range run.Cells[col].Costs {
					r := c / run.Cells[0].Costs[name]
					worst = max(worst, r)
					if r > 1+1e-9 {
						above++
						if !tc.wantAbove {
							t.Errorf("%s costs %.4f × none under %s", run.Recording, r, name)
						}
					}
				}
			}
			t.Logf("%s: %d (run, price) pairs above none, worst %.4f, %.3f × none in total (openai)", tc.preset, above, worst, tab.Rows[col].Ratios["openai"])
			if tc.wantAbove && above == 0 {
				t.Errorf("%s never costs more than none: the runs do not exercise the bank", tc.preset)
			}
		})
	}
}

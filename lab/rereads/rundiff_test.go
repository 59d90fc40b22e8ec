package rereads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/internal/replayengine"
	benchlab "github.com/agentharness/harness/lab/bench"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// price is one catalog price model applied to a request.
func price(m catalog.PriceModel, c replayengine.CallStat) float64 {
	return m.CacheWrite*float64(c.Input-c.Cached) + m.CachedRead*float64(c.Cached) + m.Output*float64(c.Output)
}

// roundRequests marks, in the requests RecoveryPriced returns for calls
// and rounds, those of the rounds: one request before call k for the
// rounds at k.
func roundRequests(calls []replayengine.CallStat, rounds []replayengine.Recovery) []bool {
	var marks []bool
	next := 0
	for k := range calls {
		if next < len(rounds) && rounds[next].At == k {
			marks = append(marks, true)
			for next < len(rounds) && rounds[next].At == k {
				next++
			}
		}
		marks = append(marks, false)
	}
	return marks
}

// TestResearchRunDiff prints, for each recording of HARNESS_RESEARCH_SETS
// whose id contains HARNESS_RUN, every request under none and under
// HARNESS_PRESET (default harness) with its re-read rounds priced as the
// bench prices them: tokens, cost under each price model, the running
// difference, and what the preset did at that request (results cut at
// arrival, results cleared, rounds and their needles).
func TestResearchRunDiff(t *testing.T) {
	sets, want := os.Getenv("HARNESS_RESEARCH_SETS"), os.Getenv("HARNESS_RUN")
	if sets == "" || want == "" {
		t.Skip("HARNESS_RESEARCH_SETS or HARNESS_RUN not set")
	}
	name := os.Getenv("HARNESS_PRESET")
	if name == "" {
		name = "harness"
	}
	p, err := benchlab.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := bench.Lookup("none")
	ctx := context.Background()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	models := catalog.PriceModels()
	for _, set := range filepath.SplitList(sets) {
		_, err := replay.LoadEach(ctx, nil, []string{set}, func(rec *replay.Recording) error {
			if !strings.Contains(rec.ID, want) {
				return nil
			}
			needles := replayengine.Needles(rec)
			opts := &replayengine.Options{Counter: tokens.NewCache(bpe, nil), Needles: needles, CacheTTL: 5 * time.Minute}
			rn, err := replayengine.Replay(ctx, rec, none.Policy(), opts)
			if err != nil {
				return err
			}
			rp, err := replayengine.Replay(ctx, rec, p.Policy(), opts)
			if err != nil {
				return err
			}
			gaps := replayengine.IdleGaps(rec)
			rn.PriceCold(gaps, 5*time.Minute)
			rp.PriceCold(gaps, 5*time.Minute)
			diff(t, rec.ID, models, rn, rp)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func diff(t *testing.T, id string, models []catalog.PriceModel, rn, rp *replayengine.Report) {
	res := map[string]replayengine.ResultStat{}
	for _, x := range rp.Results {
		res[x.CallID] = x
	}
	calls, rounds := benchcore.RecoveryPriced(rp, rn)
	roundAt := roundRequests(rp.Calls, rounds)
	var names []string
	for _, m := range models {
		names = append(names, m.Name)
	}
	t.Logf("%s under %s: %d requests, %d rounds; columns: none in/cached/out | preset in/cached/out | Δ cost per %v (running)", id, rp.Policy, len(rn.Calls), len(rounds), names)
	tot := make([]float64, len(models))
	totN := make([]float64, len(models))
	j := 0
	prevState := map[string]string{}
	for ci, c := range calls {
		var n replayengine.CallStat
		var notes []string
		isRound := roundAt[ci]
		if c.Index == 0 && !isRound {
			notes = append(notes, "REVEAL")
		}
		for ; c.Index > 0 && j < len(rn.Calls) && rn.Calls[j].Index != c.Index; j++ {
			notes = append(notes, fmt.Sprintf("none-only request %d", rn.Calls[j].Index))
			for i, m := range models {
				totN[i] += price(m, rn.Calls[j])
				tot[i] -= price(m, rn.Calls[j])
			}
		}
		if c.Index > 0 && j < len(rn.Calls) {
			n = rn.Calls[j]
			j++
		}
		var ds []string
		for i, m := range models {
			d := price(m, c) - price(m, n)
			tot[i] += d
			totN[i] += price(m, n)
			ds = append(ds, fmt.Sprintf("%+8.0f(%+8.0f)", d, tot[i]))
		}
		if isRound {
			for _, rc := range rounds {
				if rc.At == j {
					notes = append(notes, fmt.Sprintf("ROUND out %d added %d cleared@%d kept %d needles %.120v", rc.Output, rc.Added, rc.Cleared, rc.Kept, rc.Needles))
				}
			}
		}
		for _, s := range c.Shown {
			old, seen := prevState[s.CallID]
			if !seen && s.State != "whole" {
				x := res[s.CallID]
				notes = append(notes, fmt.Sprintf("new %s %s %.50q full %d shown %d", s.State, x.Tool, x.Args, x.FullChars, s.Chars))
			} else if seen && old != s.State {
				notes = append(notes, fmt.Sprintf("%s→%s %s", old, s.State, res[s.CallID].Tool))
			}
			prevState[s.CallID] = s.State
		}
		t.Logf("%3d %7d/%7d/%5d | %7d/%7d/%5d | %s %s", c.Index, n.Input, n.Cached, n.Output, c.Input, c.Cached, c.Output, strings.Join(ds, " "), strings.Join(notes, "; "))
	}
	var rs []string
	for i, m := range models {
		rs = append(rs, fmt.Sprintf("%s %.3f", m.Name, (totN[i]+tot[i])/totN[i]))
	}
	t.Logf("ratio with re-reads: %s; none %v, delta %v", strings.Join(rs, ", "), totN, tot)
}

// Package rereads attributes the re-reads the bench prices (replayengine.Recovery)
// to the cut that hid each needle, and sets them against what the cut saved.
package rereads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/replayengine"
	benchlab "github.com/agentharness/harness/lab/bench"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// cell sums, for one kind of cut, what it saved and what its re-reads cost
// (openai price: cached 0.1, uncached 1, output 4; chars/4 tokens).
type cell struct {
	results, rounds, needles int
	saved, reread            float64
}

// kindOf names how result r was cut at arrival, by tool (benchlab.ToolKind)
// and size.
func kindOf(r replayengine.ResultStat) string {
	k := benchlab.ToolKind(r.Tool, r.Args)
	if r.State == "spilled" {
		switch {
		case r.FullChars < 32<<10:
			k += "<32k"
		case r.FullChars < 64<<10:
			k += "<64k"
		default:
			k += ">64k"
		}
	}
	return k
}

// attribution sums, over one set, each kind of cut's savings and re-reads.
type attribution struct {
	cells map[string]*cell
	runs  []string
}

func (a *attribution) get(k string) *cell {
	if a.cells[k] == nil {
		a.cells[k] = &cell{}
	}
	return a.cells[k]
}

// runReport is one recording replayed under none and the preset.
type runReport struct {
	rec      *replay.Recording
	none, rp *replayengine.Report
	needles  []replayengine.Needle
	res      map[string]replayengine.ResultStat
}

// stateAt is the state of result id in request at of the preset's replay.
func (r *runReport) stateAt(at int, id string) string {
	if at >= len(r.rp.Calls) {
		return "?"
	}
	for _, s := range r.rp.Calls[at].Shown {
		if s.CallID == id {
			return s.State
		}
	}
	return "absent"
}

// savings is, per result, the characters it did not show summed over the
// requests, at 0.1 a cached token (4 characters a token).
func (r *runReport) savings() map[string]float64 {
	saved := map[string]float64{}
	for _, c := range r.rp.Calls {
		for _, s := range c.Shown {
			if d := r.res[s.CallID].FullChars - s.Chars; d > 0 {
				saved[s.CallID] += 0.1 * float64(d) / 4
			}
		}
	}
	return saved
}

// roundIDs are the results whose needles recovery round rc reads back,
// leaving out the needles none does not show either.
func (r *runReport) roundIDs(rc replayengine.Recovery) []string {
	hidden := map[string]bool{}
	for _, x := range r.none.Recoveries {
		for _, n := range x.Needles {
			hidden[n] = true
		}
	}
	callOf := map[string]string{}
	for _, n := range r.needles {
		if _, ok := callOf[n.Text]; !ok {
			callOf[n.Text] = n.CallID
		}
	}
	var ids []string
	seen := map[string]bool{}
	for _, n := range rc.Needles {
		if id := callOf[n]; !hidden[n] && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// roundCost prices recovery round rc roughly under openai: its request
// (the prefix at 0.1), its output at 4, and its page in every later
// request at 0.1 until the preset clears it (Recovery.Cleared), what the
// clear leaves after.
func (r *runReport) roundCost(rc replayengine.Recovery) float64 {
	if rc.At >= len(r.rp.Calls) {
		return 0
	}
	later, cleared := len(r.rp.Calls)-rc.At, 0
	if rc.Cleared > rc.At {
		later, cleared = rc.Cleared-rc.At, len(r.rp.Calls)-rc.Cleared
	}
	return 0.1*float64(r.rp.Calls[rc.At].Input) + 4*float64(rc.Output) + float64(rc.Added)*(1+0.1*float64(later)) +
		0.1*float64(rc.Kept*cleared)
}

// add folds one recording into a.
func (a *attribution) add(t *testing.T, r *runReport) {
	saved := r.savings()
	for id, s := range saved {
		c := a.get(kindOf(r.res[id]) + "/" + r.res[id].State)
		c.results++
		c.saved += s
	}
	total, runRe, rounds := 0.0, 0.0, 0
	for _, c := range r.none.Calls {
		total += float64(c.Input-c.Cached) + 0.1*float64(c.Cached) + 4*float64(c.Output)
	}
	for _, rc := range r.rp.Recoveries {
		ids := r.roundIDs(rc)
		if len(ids) == 0 {
			continue
		}
		cost := r.roundCost(rc)
		runRe += cost
		rounds++
		for _, id := range ids {
			x := r.res[id]
			c := a.get(fmt.Sprintf("re:%s/%s@%s", kindOf(x), x.State, r.stateAt(rc.At, id)))
			c.rounds++
			c.reread += cost / float64(len(ids))
			if f := os.Getenv("HARNESS_RUN"); f != "" && strings.Contains(r.rec.ID, f) {
				t.Logf("  round before request %d/%d (cost≈%.0f, added %d tok): %s %.80s full %d shown %d state %s@%s, arrived turn %d round %d; needles %v",
					rc.At, len(r.rp.Calls), cost, rc.Added, x.Tool, x.Args, x.FullChars, x.ShownChars, x.State, r.stateAt(rc.At, id), x.Turn, x.Round, rc.Needles)
			}
		}
	}
	all := 0.0
	for _, s := range saved {
		all += s
	}
	a.runs = append(a.runs, fmt.Sprintf("%-40s calls %4d none %9.0f saved≈%8.0f rereads %3d cost≈%8.0f (%.3f of none)",
		r.rec.ID, len(r.rp.Calls), total, all, rounds, runRe, runRe/total))
}

// TestResearchRereads prints, per set of HARNESS_RESEARCH_SETS, the
// re-reads of HARNESS_PRESET (default harness) charged to the results they
// read back, by tool kind, the cut at arrival and the state at the request
// that needed them, beside what those results saved; HARNESS_PER_RUN=1
// adds a line per recording, HARNESS_RUN=<id> each round of matching runs.
func TestResearchRereads(t *testing.T) {
	sets := os.Getenv("HARNESS_RESEARCH_SETS")
	if sets == "" {
		t.Skip("HARNESS_RESEARCH_SETS not set")
	}
	name := os.Getenv("HARNESS_PRESET")
	if name == "" {
		name = "harness"
	}
	p, err := benchlab.Lookup(name) // the product's presets and the lab's ablations
	if err != nil {
		t.Fatal(err)
	}
	none, _ := bench.Lookup("none")
	ctx := context.Background()
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range filepath.SplitList(sets) {
		a := &attribution{cells: map[string]*cell{}}
		_, err := replay.LoadEach(ctx, nil, []string{set}, func(rec *replay.Recording) error {
			r := &runReport{rec: rec, needles: replayengine.Needles(rec), res: map[string]replayengine.ResultStat{}}
			opts := &replayengine.Options{Counter: tokens.NewCache(bpe, nil), Needles: r.needles, CacheTTL: 5 * time.Minute}
			var err error
			if r.none, err = replayengine.Replay(ctx, rec, none.Policy(), opts); err != nil {
				return err
			}
			if r.rp, err = replayengine.Replay(ctx, rec, p.Policy(), opts); err != nil {
				return err
			}
			for _, x := range r.rp.Results {
				r.res[x.CallID] = x
			}
			a.add(t, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		a.log(t, set, name)
	}
}

// log prints a's cells in name order, and its runs when asked.
func (a *attribution) log(t *testing.T, set, preset string) {
	keys := make([]string, 0, len(a.cells))
	for k := range a.cells {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("set %s preset %s", set, preset)
	for _, k := range keys {
		c := a.cells[k]
		t.Logf("%-36s results %4d saved≈%10.0f | rounds %4d reread≈%10.0f", k, c.results, c.saved, c.rounds, c.reread)
	}
	if os.Getenv("HARNESS_PER_RUN") != "" {
		for _, r := range a.runs {
			t.Log(r)
		}
	}
}

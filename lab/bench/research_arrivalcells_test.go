package benchlab

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/replay"
)

// The plainest predictor of which results an agent will never use: the
// kind of call, the result's size, the half of the run and the exit status.
// Each result falls in a cell of those; the cells with the fewest needles
// per char-weighted cost (the attribution's: a result costs its characters
// at 1 where it arrives and 0.1 in each later request) are emptied at
// arrival until a share of the needles would be lost.

// arrivalCell is what one cell holds: its char-weighted cost and the
// needles that come from its results.
type arrivalCell struct {
	cost    float64
	needles int
}

// arrivalCells is one set's cells, its whole result cost and its needles.
type arrivalCells struct {
	name    string
	cells   map[string]arrivalCell
	cost    float64
	needles int
}

// cellOf names the cell of a result: callKind, the first program for a
// shell call, the size band, the half of the run and whether the output
// reports a failing exit (mini-swe-agent's <returncode>).
func cellOf(c *replay.Call, i int, r *replay.Result, half string) string {
	tool, args := r.Tool, ""
	if i < len(c.Assistant.ToolCalls) {
		tool, args = c.Assistant.ToolCalls[i].Name, string(c.Assistant.ToolCalls[i].Args)
	}
	kind := callKind(tool, args)
	if strings.HasPrefix(kind, "shell") {
		if f := strings.Fields(strings.NewReplacer(`\"`, " ", `"`, " ", ":", " ", "{", " ").Replace(args)); len(f) > 1 {
			kind += " " + f[1]
		}
	}
	text := r.FullText()
	band := "<1k"
	switch n := len(text); {
	case n >= 8000:
		band = "8k+"
	case n >= 3000:
		band = "3-8k"
	case n >= 1000:
		band = "1-3k"
	}
	exit := "ok"
	if strings.Contains(text, "<returncode>") && !strings.Contains(text, "<returncode>0</returncode>") || r.IsError {
		exit = "failed"
	}
	return kind + "|" + band + "|" + half + "|" + exit
}

// newArrivalCells sorts every result of recs into its cell.
func newArrivalCells(name string, recs []*replay.Recording) arrivalCells {
	s := arrivalCells{name: name, cells: map[string]arrivalCell{}}
	for _, rec := range recs {
		needles := replay.Needles(rec)
		s.needles += len(needles)
		from := map[string]int{}
		for _, n := range needles {
			from[n.CallID]++
		}
		total, req := rec.Calls(), 0
		for _, t := range rec.Turns {
			for _, c := range t.Calls {
				req++
				half := "first half"
				if 2*req > total {
					half = "second half"
				}
				for i, r := range c.Results {
					k := cellOf(c, i, r, half)
					w := float64(len(r.FullText())) * (1 + 0.1*float64(total-req))
					cell := s.cells[k]
					cell.cost += w
					cell.needles += from[r.CallID]
					s.cells[k] = cell
					s.cost += w
				}
			}
		}
	}
	return s
}

// chooseCells returns the cells to empty: the fewest needles per unit of
// cost first, each taken while the needles lost stay within budget (a
// share of needles) and skipped otherwise.
func chooseCells(cells map[string]arrivalCell, needles int, budget float64) map[string]bool {
	keys := make([]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	density := func(k string) float64 { return float64(cells[k].needles) / max(cells[k].cost, 1e-9) }
	slices.SortFunc(keys, func(a, b string) int {
		switch da, db := density(a), density(b); {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return strings.Compare(a, b)
	})
	chosen := map[string]bool{}
	lost := 0
	for _, k := range keys {
		if float64(lost+cells[k].needles) > budget*float64(needles) {
			continue
		}
		lost += cells[k].needles
		chosen[k] = true
	}
	return chosen
}

// emptied is the share of s's result cost and of its needles in chosen.
func (s arrivalCells) emptied(chosen map[string]bool) (cost, needles float64) {
	var c float64
	n := 0
	for k, cell := range s.cells {
		if chosen[k] {
			c += cell.cost
			n += cell.needles
		}
	}
	return c / s.cost, float64(n) / float64(max(s.needles, 1))
}

// TestResearchArrivalCells prints, for the sets named by
// HARNESS_RESEARCH_SETS, what emptying the cheapest cells at arrival
// takes within a 2.5% needle budget: fitted on the set itself (an
// in-sample bound) and chosen on the other sets (each set's cells weighed
// by its share of its own cost) and applied to it. docs/design.md reports
// the figures.
func TestResearchArrivalCells(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	const budget = 0.025
	var sets []arrivalCells
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, newArrivalCells(dir, recs))
	}
	for h, held := range sets {
		cost, lost := held.emptied(chooseCells(held.cells, held.needles, budget))
		t.Logf("%s: fitted on itself, %.1f%% of the result cost emptied, %.1f%% of %d needles lost (%d cells)", held.name, 100*cost, 100*lost, held.needles, len(held.cells))
		pool, needles := map[string]arrivalCell{}, 0
		for i, o := range sets {
			if i == h {
				continue
			}
			needles += o.needles
			for k, c := range o.cells {
				p := pool[k]
				p.cost += c.cost / o.cost
				p.needles += c.needles
				pool[k] = p
			}
		}
		if len(pool) == 0 {
			continue
		}
		cost, lost = held.emptied(chooseCells(pool, needles, budget))
		t.Logf("%s: chosen on the others, %.1f%% of the result cost emptied, %.1f%% of its needles lost", held.name, 100*cost, 100*lost)
	}
}

// TestChooseCells checks the greedy choice: cheapest needles per cost
// first, a cell that would break the budget skipped and a later one
// still taken.
func TestChooseCells(t *testing.T) {
	cells := map[string]arrivalCell{
		"never used": {cost: 100, needles: 0},
		"dense":      {cost: 10, needles: 50},
		"sparse big": {cost: 1000, needles: 6},
		"sparse":     {cost: 100, needles: 2},
	}
	got := chooseCells(cells, 100, 0.05)
	want := map[string]bool{"never used": true, "sparse": true}
	if len(got) != len(want) || !got["never used"] || !got["sparse"] {
		t.Fatalf("chose %v, want %v: 'sparse big' (6 needles) breaks a 5-needle budget after 'never used', 'sparse' (2) still fits", got, want)
	}
	s := arrivalCells{cells: cells, cost: 1210, needles: 100}
	cost, lost := s.emptied(got)
	if cost != 200.0/1210 || lost != 0.02 {
		t.Fatalf("emptied %.4f of the cost and %.4f of the needles, want %.4f and 0.02", cost, lost, 200.0/1210)
	}
}

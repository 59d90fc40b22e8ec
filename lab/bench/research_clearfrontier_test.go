package benchlab

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/agentharness/harness/bench/data"
	"github.com/agentharness/harness/replay"
)

// The clearing frontier: how much of the removable cost any rule that
// clears old results can remove at a given visible share, on the results
// the recording showed (no arrival cut). It is the physical limit of the
// half of a policy that acts after arrival: a clear saves 0.1 × what it
// removes on every later request and pays, once, the prefix after the
// first result it changes at full price. Cost is char-weighted at gpt-5
// prices with a warm cache (uncached 1, cached 0.1, output 4), as the
// attribution's is, but with the cache breaks counted exactly.

// frontierPlaceholder is the characters a cleared result still shows (a
// placeholder that says how to get it back).
const frontierPlaceholder = 80

// frontierRun is a recording reduced to what the frontier's accounting
// reads: per round (one recorded model call), the characters that reach
// the conversation before the call (a turn's input), the assistant
// message's characters (text and call arguments) and its results'
// characters (the full output, which keeping everything shows); and per needle the round that first uses it and the
// rounds whose results hold its text.
type frontierRun struct {
	system  float64
	pre     []float64
	out     []float64
	res     []float64
	needles []frontierNeedle
}

type frontierNeedle struct {
	use     int
	source  int
	holders []int
}

func newFrontierRun(rec *replay.Recording) frontierRun {
	x := frontierRun{system: float64(len(rec.System))}
	round := map[string]int{}
	var texts []string
	for _, t := range rec.Turns {
		pre := float64(len(t.Input))
		for _, c := range t.Context {
			pre += float64(len(c.Text))
		}
		for _, c := range t.Calls {
			out := float64(len(c.Assistant.Text()))
			for _, tc := range c.Assistant.ToolCalls {
				out += float64(len(tc.Name) + len(tc.Args))
			}
			var shown strings.Builder
			for _, r := range c.Results {
				shown.WriteString(r.FullText())
				round[r.CallID] = len(x.out)
			}
			x.pre = append(x.pre, pre)
			x.out = append(x.out, out)
			x.res = append(x.res, float64(shown.Len()))
			texts = append(texts, shown.String())
			pre = 0
		}
	}
	start := make([]int, len(rec.Turns))
	for i := 1; i < len(rec.Turns); i++ {
		start[i] = start[i-1] + len(rec.Turns[i-1].Calls)
	}
	for _, n := range replay.Needles(rec) {
		fn := frontierNeedle{use: start[n.Turn] + n.Call, source: round[n.CallID]}
		for j := 0; j < fn.use; j++ {
			if strings.Contains(texts[j], n.Text) {
				fn.holders = append(fn.holders, j)
			}
		}
		x.needles = append(x.needles, fn)
	}
	return x
}

// frontierRule is one way of clearing: at every request a schedule marks,
// the results of rounds older than the newest Window rounds are cleared,
// but for those the agent has quoted (a needle of theirs used before the
// request) when KeepQuoted.
type frontierRule struct {
	Window     int
	KeepQuoted bool
}

// cost prices x when the rule clears at the requests clears marks (nil:
// never), and counts the needles visible in the request that first uses
// them; floor prices every result empty instead.
func (x frontierRun) cost(rule frontierRule, clears []bool, floor bool) (cost float64, visible, needles int) {
	n := len(x.out)
	cleared := make([]bool, n)
	quoted := make([]int, n) // the request from which a result counts as quoted
	for j := range quoted {
		quoted[j] = math.MaxInt
	}
	for _, nd := range x.needles {
		quoted[nd.source] = min(quoted[nd.source], nd.use+1)
	}
	shown := func(j int) float64 {
		if floor {
			return 0
		}
		if cleared[j] {
			return math.Min(x.res[j], frontierPlaceholder)
		}
		return x.res[j]
	}
	prev := 0.0
	for i := 0; i < n; i++ {
		first := -1
		if clears != nil && clears[i] {
			for j := 0; j < i-rule.Window; j++ {
				if cleared[j] || (rule.KeepQuoted && quoted[j] <= i) || x.res[j] <= frontierPlaceholder {
					continue
				}
				cleared[j] = true
				if first < 0 {
					first = j
				}
			}
		}
		size, kept := x.system, -1.0
		for j := 0; j < i; j++ {
			if j == first {
				kept = size + x.pre[j] + x.out[j]
			}
			size += x.pre[j] + x.out[j] + shown(j)
		}
		size += x.pre[i]
		cached := prev
		if kept >= 0 {
			cached = math.Min(cached, kept)
		}
		cost += size - cached + 0.1*cached + 4*x.out[i]
		prev = size
		for _, nd := range x.needles {
			if nd.use != i {
				continue
			}
			needles++
			for _, j := range nd.holders {
				if !floor && !cleared[j] {
					visible++
					break
				}
			}
		}
	}
	return cost, visible, needles
}

// bestSchedule is the cheapest schedule, and its cost, of age clears (KeepQuoted off)
// for one window, found in hindsight by dynamic programming over the
// request of each clear: the bound on timing that no rule reading only the
// past can beat. With the last clear at kp, every request before the next
// clear sends the full prefix less what kp's clear removed, append-only,
// so a segment's cost is read off prefix sums.
func (x frontierRun) bestSchedule(window int) ([]bool, float64) {
	n := len(x.out)
	if n == 0 {
		return nil, 0
	}
	full := make([]float64, n+1)   // full[i]: the prompt of request i, nothing cleared
	before := make([]float64, n+1) // before[j]: the prompt up to round j's results
	saved := make([]float64, n+1)  // saved[j]: what clearing rounds < j removes
	full[0] = x.system + x.pre[0]
	for j := 0; j < n; j++ {
		before[j] = full[j] + x.out[j]
		if j+1 < n {
			full[j+1] = before[j] + x.res[j] + x.pre[j+1]
		}
		saved[j+1] = saved[j] + math.Max(0, x.res[j]-frontierPlaceholder)
	}
	removed := func(k int) float64 { return saved[max(0, min(n, k-window))] }
	// seg is the cost of requests kp+1..k (kp = -1: none cleared yet),
	// with a clear at k unless k == n.
	seg := func(kp, k int) float64 {
		s := 0.0 // what kp's clear removed, from request kp on
		if kp >= 0 {
			s = removed(kp)
		}
		prev := func(i int) float64 {
			if i == 0 {
				return 0
			}
			return full[i-1] - s
		}
		c := 0.0
		for i := kp + 1; i < k; i++ {
			c += full[i] - s - prev(i) + 0.1*prev(i) + 4*x.out[i]
		}
		if k == n {
			return c
		}
		cached := prev(k)
		lo := 0
		if kp >= 0 {
			lo = max(0, kp-window)
		}
		for j := lo; j < k-window; j++ {
			if x.res[j] > frontierPlaceholder {
				cached = math.Min(cached, before[j]-s)
				break
			}
		}
		size := full[k] - removed(k)
		return c + size - cached + 0.1*cached + 4*x.out[k]
	}
	f := make([]float64, n+1)
	from := make([]int, n+1)
	for k := 0; k <= n; k++ {
		f[k], from[k] = seg(-1, k), -1
		for kp := 0; kp < k; kp++ {
			if v := f[kp] + seg(kp, k); v < f[k] {
				f[k], from[k] = v, kp
			}
		}
	}
	clears := make([]bool, n)
	for k := from[n]; k >= 0; k = from[k] {
		clears[k] = true
	}
	return clears, f[n]
}

// periodic marks every p-th request (none when p < 1).
func periodic(n, p int) []bool {
	clears := make([]bool, n)
	for i := p; p > 0 && i < n; i += p {
		clears[i] = true
	}
	return clears
}

// frontierPoint is one rule's figures summed over a set.
type frontierPoint struct {
	name              string
	none, floor, cost float64
	visible, needles  int
}

func (p *frontierPoint) add(cost float64, visible, needles int) {
	p.cost += cost
	p.visible += visible
	p.needles += needles
}

func (p frontierPoint) removed() float64 { return (p.none - p.cost) / (p.none - p.floor) }
func (p frontierPoint) visibleShare() float64 {
	if p.needles == 0 {
		return 1
	}
	return float64(p.visible) / float64(p.needles)
}

// frontierPoints prices every rule of the grid on recs.
func frontierPoints(recs []*replay.Recording) []frontierPoint {
	type variant struct {
		name  string
		rule  frontierRule
		every int // 0: the hindsight schedule
	}
	var vs []variant
	for _, w := range []int{4, 8, 16, 32} {
		vs = append(vs, variant{fmt.Sprintf("age W=%d, best timing", w), frontierRule{Window: w}, 0})
		for _, p := range []int{8, 16, 32} {
			vs = append(vs, variant{fmt.Sprintf("age W=%d, every %d", w, p), frontierRule{Window: w}, p})
			vs = append(vs, variant{fmt.Sprintf("unquoted W=%d, every %d", w, p), frontierRule{Window: w, KeepQuoted: true}, p})
		}
	}
	pts := make([]frontierPoint, len(vs))
	for i, v := range vs {
		pts[i].name = v.name
	}
	var none, floor float64
	for _, rec := range recs {
		x := newFrontierRun(rec)
		c, _, _ := x.cost(frontierRule{}, nil, false)
		f, _, _ := x.cost(frontierRule{}, nil, true)
		none, floor = none+c, floor+f
		for i, v := range vs {
			var clears []bool
			if v.every == 0 {
				clears, _ = x.bestSchedule(v.rule.Window)
			} else {
				clears = periodic(len(x.out), v.every)
			}
			pts[i].add(x.cost(v.rule, clears, false))
		}
	}
	for i := range pts {
		pts[i].none, pts[i].floor = none, floor
	}
	return pts
}

// TestResearchClearFrontier prints, for each set named by
// HARNESS_RESEARCH_SETS, the clearing frontier: the removal and visible
// share of every rule of the grid, and the most any of them removes at 97%
// visible or more. docs/design.md reports the table.
func TestResearchClearFrontier(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		best, removed, visible := "keeping everything", 0.0, 1.0
		for _, p := range frontierPoints(recs) {
			t.Logf("%s\t%s\tremoved %.1f%%\tvisible %.1f%%", dir, p.name, 100*p.removed(), 100*p.visibleShare())
			if p.visibleShare() >= 0.97 && p.removed() > removed {
				best, removed, visible = p.name, p.removed(), p.visibleShare()
			}
		}
		t.Logf("%s: most removed at ≥ 97%% visible: %s, %.1f%% at %.1f%%", dir, best, 100*removed, 100*visible)
	}
}

// TestFrontierAccounting checks the frontier's two accountings against
// each other and against hand-computed prices: the hindsight schedule's
// cost as its dynamic program sums it equals the request-by-request price
// of the same schedule, no schedule of the grid is cheaper, and a clear
// that pays is taken.
func TestFrontierAccounting(t *testing.T) {
	// Ten rounds; round 0 returns 10,000 characters that nothing uses,
	// the others 100.
	x := frontierRun{system: 1000}
	for i := range 10 {
		x.pre = append(x.pre, 0)
		x.out = append(x.out, 50)
		x.res = append(x.res, 100)
		if i == 0 {
			x.res[i] = 10000
		}
	}
	x.pre[0] = 200
	none, _, _ := x.cost(frontierRule{}, nil, false)
	// By hand: request i sends 1,200 + 150·i (+ 9,900 once round 0's
	// result is in), caches the previous prompt, and writes 50 at 4.
	want := 0.0
	prev := 0.0
	for i := range 10 {
		size := 1200 + 150*float64(i)
		if i > 0 {
			size += 9900
		}
		want += size - prev + 0.1*prev + 200
		prev = size
	}
	if math.Abs(none-want) > 1e-6 {
		t.Fatalf("none costs %.1f, want %.1f", none, want)
	}
	clears, dp := x.bestSchedule(2)
	got, _, _ := x.cost(frontierRule{Window: 2}, clears, false)
	if math.Abs(got-dp) > 1e-6 {
		t.Fatalf("the hindsight schedule %v costs %.1f priced request by request, %.1f by its program", clears, got, dp)
	}
	if dp >= none {
		t.Fatalf("clearing 9,920 unused characters early in a 10-round run does not pay: %.1f against none's %.1f", dp, none)
	}
	for p := 1; p < 10; p++ {
		if c, _, _ := x.cost(frontierRule{Window: 2}, periodic(10, p), false); c < dp-1e-6 {
			t.Errorf("clearing every %d requests costs %.1f, less than the hindsight schedule's %.1f", p, c, dp)
		}
	}
}

// TestFrontierOnShippedRuns checks the same on the real runs harness
// ships, and that the frontier's bounds hold there: nothing is cheaper
// than the floor, keeping everything shows every needle, and keeping the
// quoted results never shows fewer needles than clearing by age alone.
func TestFrontierOnShippedRuns(t *testing.T) {
	recs, err := data.Load(context.Background(), "mini-swe-agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		x := newFrontierRun(rec)
		none, vis, needles := x.cost(frontierRule{}, nil, false)
		floor, _, _ := x.cost(frontierRule{}, nil, true)
		if vis != needles {
			t.Errorf("%s: keeping everything shows %d of %d needles", rec.ID, vis, needles)
		}
		for _, w := range []int{4, 16} {
			clears, dp := x.bestSchedule(w)
			got, _, _ := x.cost(frontierRule{Window: w}, clears, false)
			if math.Abs(got-dp) > 1e-6*none || dp > none+1e-6 || dp < floor {
				t.Errorf("%s W=%d: hindsight schedule %.0f by its program, %.0f priced; none %.0f, floor %.0f", rec.ID, w, dp, got, none, floor)
			}
			every := periodic(len(x.out), 8)
			_, ageVis, _ := x.cost(frontierRule{Window: w}, every, false)
			_, quotedVis, _ := x.cost(frontierRule{Window: w, KeepQuoted: true}, every, false)
			if quotedVis < ageVis {
				t.Errorf("%s W=%d: keeping quoted results shows %d needles, clearing by age %d", rec.ID, w, quotedVis, ageVis)
			}
		}
	}
}

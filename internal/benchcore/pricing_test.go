package benchcore

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

func cost(p Pricing, calls []replayengine.CallStat) float64 {
	s := 0.0
	for _, c := range calls {
		s += p.Cost(c)
	}
	return s
}

func TestPricingCost(t *testing.T) {
	appendOnly := []replayengine.CallStat{{Input: 1000, Output: 10}, {Input: 1100, Cached: 1000, Output: 10}}
	broken := []replayengine.CallStat{{Input: 1000, Output: 10}, {Input: 1100, Cached: 0, Output: 10}}
	for _, tc := range []struct {
		pricing        string
		append, break_ float64
	}{
		// 1000 + 40, then 100 + 0.1 × 1000 + 40 | 1100 + 40.
		{"openai", 1000 + 40 + 100 + 100 + 40, 1000 + 40 + 1100 + 40},
		{"openai-4.1", 1000 + 40 + 100 + 250 + 40, 1000 + 40 + 1100 + 40},
		// The break pays the cache write again: 1.25 × 1100 instead of
		// 1.25 × 100 + 0.1 × 1000.
		{"anthropic", 1250 + 40 + 125 + 100 + 40, 1250 + 40 + 1375 + 40},
		{"nocache", 1000 + 40 + 1100 + 40, 1000 + 40 + 1100 + 40},
	} {
		p, err := lookupPricing(tc.pricing)
		if err != nil {
			t.Fatal(err)
		}
		if got := cost(p, appendOnly); math.Abs(got-tc.append) > 1e-9 {
			t.Errorf("%s append-only: %v, want %v", tc.pricing, got, tc.append)
		}
		if got := cost(p, broken); math.Abs(got-tc.break_) > 1e-9 {
			t.Errorf("%s broken prefix: %v, want %v", tc.pricing, got, tc.break_)
		}
	}
	// openai is effective tokens exactly.
	op, _ := lookupPricing("openai")
	for _, c := range broken {
		if got, want := op.Cost(c), c.Usage().Effective(); got != want {
			t.Errorf("openai %v, effective %v", got, want)
		}
	}
}

func TestParsePricings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{"", "openai,anthropic", ""},
		{"nocache", "nocache", ""},
		{" openai-4.1 , anthropic", "openai-4.1,anthropic", ""},
		{"openai,gemini", "", `unknown pricing "gemini"`},
	} {
		got, err := ParsePricings(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestCacheBreaks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls []replayengine.CallStat
		want  int
	}{
		{"empty", nil, 0},
		{"first request never breaks", []replayengine.CallStat{{Input: 500}}, 0},
		{"append only", []replayengine.CallStat{{Input: 100}, {Input: 200, Cached: 100}, {Input: 300, Cached: 200}}, 0},
		{"same prefix is no break", []replayengine.CallStat{{Input: 100}, {Input: 200, Cached: 100}, {Input: 210, Cached: 100}}, 0},
		{"a clear cuts into the cache", []replayengine.CallStat{{Input: 100}, {Input: 200, Cached: 100}, {Input: 150, Cached: 40}, {Input: 250, Cached: 150}}, 1},
		{"two breaks", []replayengine.CallStat{{Input: 100}, {Input: 200, Cached: 100}, {Input: 90, Cached: 0}, {Input: 190, Cached: 90}, {Input: 50, Cached: 10}}, 2},
	} {
		if got := CacheBreaks(tc.calls); got != tc.want {
			t.Errorf("%s: %d breaks, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRemovedShare(t *testing.T) {
	row := func(name string, openai, anthropic float64) Row {
		return Row{Preset: name, Figures: Figures{Costs: map[string]float64{"openai": openai, "anthropic": anthropic}}}
	}
	rows := []Row{row("none", 1000, 1200), row("half", 600, 700), row("floor", 200, 200)}
	removed(rows)
	for _, tc := range []struct {
		row             int
		openai, anthrop float64
	}{{0, 0, 0}, {1, 0.5, 0.5}, {2, 1, 1}} {
		r := rows[tc.row]
		if r.Removed["openai"] != tc.openai || r.Removed["anthropic"] != tc.anthrop {
			t.Errorf("%s: removed %v, want openai %v anthropic %v", r.Preset, r.Removed, tc.openai, tc.anthrop)
		}
	}
	// Without floor there is no bound to share against.
	noFloor := []Row{row("none", 1000, 1200), row("half", 600, 700)}
	removed(noFloor)
	if noFloor[1].Removed != nil {
		t.Errorf("removed without floor: %v", noFloor[1].Removed)
	}
}

func TestRiskAboveTolerance(t *testing.T) {
	cell := func(openai, anthropic float64) *Figures {
		return &Figures{Costs: map[string]float64{"openai": openai, "anthropic": anthropic}}
	}
	none := cell(1000, 1000)
	var k Risk
	for _, c := range []*Figures{
		cell(1000, 1000), // equal: not above
		cell(1010, 1010), // exactly 1.01: not above
		cell(900, 1011),  // above under anthropic only: counts once
		cell(1200, 1300), // above under both: counts once
		cell(500, 400),
	} {
		k.judge(c, none)
	}
	if k.AboveTolerance != 2 {
		t.Errorf("above 1.01 × none: %d runs, want 2", k.AboveTolerance)
	}
	if k.Worst != 1.3 {
		t.Errorf("worst ratio %v, want 1.3", k.Worst)
	}
}

func TestTableShowsPricing(t *testing.T) {
	tab := &Table{Rows: []Row{{Preset: "none", Figures: Figures{Costs: map[string]float64{}, Ratios: map[string]float64{"openai-4.1": 1}}}}, Pricings: []string{"openai-4.1"}}
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pricing: openai-4.1", "breaks/100", "> 1.01×"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text table lacks %q:\n%s", want, b.String())
		}
	}
	// One column per group (× none, removed, with re-reads), each named by
	// the price model under its group's label.
	lines := strings.Split(b.String(), "\n")
	groups, cols := strings.Fields(lines[0]), strings.Fields(lines[1])
	if strings.Join(groups, " ") != "× none removed with re-reads" || strings.Count(strings.Join(cols, " "), "openai-4.1") != 3 {
		t.Errorf("header:\n%s\n%s", lines[0], lines[1])
	}
}

// TestCacheTTLPricesColdRequests: by default (the zero Options: CacheTTL
// catalog.DefaultCacheLifetime) a request that follows a pause longer than the cache's
// lifetime pays its prefix uncached, under every preset, and the table
// says so; NoCacheExpiry prices it warm; without times nothing changes;
// a negative CacheTTL is refused.
func TestCacheTTLPricesColdRequests(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var rec *replay.Recording
	for _, r := range recs {
		if r.Calls() >= 5 {
			rec = r
			break
		}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := 0
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			c.Time = t0.Add(time.Duration(k) * time.Minute)
			if k >= 3 {
				c.Time = c.Time.Add(10 * time.Minute) // call 3 comes 11 minutes after call 2
			}
			k++
		}
	}
	h, _ := Lookup("harness")
	ps := []Preset{h}
	warm, reps, err := RunReports(context.Background(), Options{Presets: ps, NoCacheExpiry: true}, []*replay.Recording{rec})
	if err != nil {
		t.Fatal(err)
	}
	cold, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	if nilOpts, err := Run(context.Background(), []*replay.Recording{rec}, nil); err != nil || nilOpts.Rows[0].Cached != cold.Rows[0].Cached {
		t.Errorf("nil Options: %v; none's cached %d, want the zero Options' %d", err, nilOpts.Rows[0].Cached, cold.Rows[0].Cached)
	}
	if explicit, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: ps, CacheTTL: catalog.DefaultCacheLifetime}); err != nil || explicit.Rows[1].Cached != cold.Rows[1].Cached {
		t.Errorf("CacheTTL %v: %v; harness's cached differs from the zero Options'", catalog.DefaultCacheLifetime, err)
	}
	if long, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: ps, CacheTTL: time.Hour}); err != nil || long.Rows[1].Cached != warm.Rows[1].Cached {
		t.Errorf("CacheTTL 1h (longer than every pause): %v; want the warm pricing", err)
	}
	if _, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: ps, CacheTTL: -time.Second}); err == nil || !strings.Contains(err.Error(), "CacheTTL -1s") {
		t.Errorf("CacheTTL -1s: err %v, want a clear refusal", err)
	}
	if warm.CacheTTL != 0 || cold.CacheTTL != catalog.DefaultCacheLifetime || warm.CacheTTLSeconds != 0 || cold.CacheTTLSeconds != 300 {
		t.Errorf("Table.CacheTTL warm %v (%v s), cold %v (%v s); want 0 and %v (300 s)", warm.CacheTTL, warm.CacheTTLSeconds, cold.CacheTTL, cold.CacheTTLSeconds, catalog.DefaultCacheLifetime)
	}
	for _, tc := range []struct {
		tab  *Table
		want string
	}{{warm, "pricing: openai, anthropic; cache never expires (warm)"}, {cold, "pricing: openai, anthropic; cache expires after 5m idle"}} {
		var b strings.Builder
		if err := tc.tab.WriteText(&b); err != nil || !strings.Contains(b.String(), tc.want) {
			t.Errorf("text table (%v) lacks %q:\n%s", err, tc.want, b.String())
		}
	}
	openai, _ := lookupPricing("openai")
	anthropic, _ := lookupPricing("anthropic")
	for p := range warm.Rows {
		x := float64(reps[0][p].Calls[3].Cached)
		if x == 0 {
			t.Fatalf("%s: call 3 has no cached prefix to lose", warm.Rows[p].Preset)
		}
		w, c := warm.Rows[p], cold.Rows[p]
		if c.Cached != w.Cached-int(x) || c.Input != w.Input {
			t.Errorf("%s: cached %d → %d, want %d less; input %d → %d", w.Preset, w.Cached, c.Cached, int(x), w.Input, c.Input)
		}
		for _, tc := range []struct {
			pr   Pricing
			more float64
		}{{openai, 0.9 * x}, {anthropic, 1.15 * x}} {
			if got := c.Costs[tc.pr.Name] - w.Costs[tc.pr.Name]; math.Abs(got-tc.more) > 0.02 {
				t.Errorf("%s under %s: cold costs %.2f more, want %.2f", w.Preset, tc.pr.Name, got, tc.more)
			}
		}
		if math.Abs(c.Effective-w.Effective-0.9*x) > 0.2 {
			t.Errorf("%s: effective %.1f → %.1f, want %.1f more", w.Preset, w.Effective, c.Effective, 0.9*x)
		}
	}
	// Without times the TTL changes nothing.
	for _, r := range rec.Turns {
		for _, c := range r.Calls {
			c.Time = time.Time{}
		}
	}
	again, err := Run(context.Background(), []*replay.Recording{rec}, &Options{Presets: ps})
	if err != nil {
		t.Fatal(err)
	}
	for p := range warm.Rows {
		if again.Rows[p].Cached != warm.Rows[p].Cached || again.Rows[p].Costs["anthropic"] != warm.Rows[p].Costs["anthropic"] {
			t.Errorf("%s: untimed recording priced differently: cached %d vs %d", warm.Rows[p].Preset, again.Rows[p].Cached, warm.Rows[p].Cached)
		}
	}
}

// TestExpireColdRevealRound: after a pause, the first request sent is
// the cold one: a reveal round (Index 0) the replay put before the
// recorded call, not the call right after it; without a reveal round, the
// call itself.
func TestExpireColdRevealRound(t *testing.T) {
	gaps := []time.Duration{0, time.Minute, 10 * time.Minute} // call 3 comes after a 10-minute pause
	tests := []struct {
		name       string
		calls      []replayengine.CallStat
		wantCached []int
	}{
		{"no reveal", []replayengine.CallStat{{Index: 1, Input: 100}, {Index: 2, Input: 120, Cached: 100}, {Index: 3, Input: 150, Cached: 120}},
			[]int{0, 100, 0}},
		{"reveal before the paused call", []replayengine.CallStat{{Index: 1, Input: 100}, {Index: 2, Input: 120, Cached: 100},
			{Index: 0, Input: 130, Cached: 120}, {Index: 3, Input: 160, Cached: 130}},
			[]int{0, 100, 0, 130}},
		{"reveal before a warm call", []replayengine.CallStat{{Index: 1, Input: 100}, {Index: 0, Input: 110, Cached: 100},
			{Index: 2, Input: 130, Cached: 110}, {Index: 3, Input: 150, Cached: 130}},
			[]int{0, 100, 110, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &replayengine.Report{Calls: slices.Clone(tt.calls)}
			for _, c := range tt.calls {
				rep.Usage = rep.Usage.Add(c.Usage())
			}
			before := rep.Usage.Cached
			rep.PriceCold(gaps, catalog.DefaultCacheLifetime)
			lost := 0
			for i, c := range rep.Calls {
				if c.Cached != tt.wantCached[i] {
					t.Errorf("call %d (index %d): cached %d, want %d", i, c.Index, c.Cached, tt.wantCached[i])
				}
				lost += tt.calls[i].Cached - c.Cached
			}
			if rep.Usage.Cached != before-lost || rep.Effective != rep.Usage.Effective() {
				t.Errorf("usage cached %d, want %d; effective %v, want %v", rep.Usage.Cached, before-lost, rep.Effective, rep.Usage.Effective())
			}
		})
	}
}

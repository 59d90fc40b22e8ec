package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/replay"
)

// TestResearchColdCache measures what the replay's warm-cache assumption
// is worth on the sets named by HARNESS_RESEARCH_SETS: the replay counts a
// request's prefix shared with the previous request as cached whatever the
// time between them, while a provider's cache expires (replay.CacheTTL).
// Per set it prints how many requests came more than CacheTTL after the
// one before (replay.IdleGaps, from the recorded times), and, for none and
// harness, how much more they would cost under each price model had those
// requests found the cache cold (their cached prefix paid as uncached
// input, written again under Anthropic's prices) — and what a clear at
// those requests, which breaks no cache that is still warm, could reach
// (docs/design.md, "Cold caches").
func TestResearchColdCache(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	none, _ := Lookup("none")
	h, _ := Lookup("harness")
	var b strings.Builder
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, reports, err := runReports(context.Background(), Options{Presets: []Preset{none, h}}, recs)
		if err != nil {
			t.Fatal(err)
		}
		var calls, timed, cold, coldRuns int
		base := map[string][2]float64{}  // price → cost of none, harness
		extra := map[string][2]float64{} // price → what the cold requests add
		for i, rec := range recs {
			gaps := replay.IdleGaps(rec)
			runCold := 0
			for p, rep := range reports[i][:2] {
				for _, pr := range Pricings() {
					v := base[pr.Name]
					for _, c := range rep.Calls {
						v[p] += pr.Cost(c)
					}
					base[pr.Name] = v
				}
				if len(rep.Calls) != len(gaps) {
					continue // a stop skipped calls: indexes no longer line up
				}
				for k, c := range rep.Calls {
					if gaps[k] <= replay.CacheTTL {
						continue
					}
					if p == 0 {
						runCold++
					}
					for _, pr := range Pricings() {
						v := extra[pr.Name]
						v[p] += (pr.CacheWrite - pr.CachedRead) * float64(c.Cached)
						extra[pr.Name] = v
					}
				}
			}
			for _, g := range gaps {
				if g > 0 {
					timed++
				}
			}
			calls += len(gaps)
			cold += runCold
			if runCold > 0 {
				coldRuns++
			}
		}
		fmt.Fprintf(&b, "%s: %d runs, %d requests (%d timed), %d after more than %s idle, in %d runs\n", filepath.Base(dir), len(recs), calls, timed, cold, replay.CacheTTL, coldRuns)
		free := coldClearBound(recs, reports)
		fmt.Fprintf(&b, "  a clear at each cold request of the results older than 4 rounds would save at most %.1f%% (openai) / %.1f%% (anthropic) of harness's cost\n",
			100*free["openai"]/base["openai"][1], 100*free["anthropic"]/base["anthropic"][1])
		for _, pr := range Pricings() {
			fmt.Fprintf(&b, "  %-10s cold requests add %.1f%% to none, %.1f%% to harness; harness × none %.3f warm, %.3f cold\n", pr.Name,
				100*extra[pr.Name][0]/base[pr.Name][0], 100*extra[pr.Name][1]/base[pr.Name][1],
				base[pr.Name][1]/base[pr.Name][0], (base[pr.Name][1]+extra[pr.Name][1])/(base[pr.Name][0]+extra[pr.Name][0]))
		}
	}
	t.Log("\n" + b.String())
}

// coldClearBound estimates, per price model, what harness would save if
// at each request that found the cache cold it cleared every result it
// still showed that arrived more than 4 rounds before: a clear there
// breaks no warm cache. Each such result's tokens (its shown characters
// ÷ 4) are saved at the uncached price in that request and at the cached
// price in every later one. It is an upper bound: it hides what the agent
// quotes later, and harness may have cleared some of them anyway.
func coldClearBound(recs []*replay.Recording, reports [][]*replay.Report) map[string]float64 {
	save := map[string]float64{}
	for i, rec := range recs {
		rep, gaps := reports[i][1], replay.IdleGaps(rec)
		if len(rep.Calls) != len(gaps) {
			continue
		}
		arrive, k := map[string]int{}, 0
		for _, t := range rec.Turns {
			for _, c := range t.Calls {
				for _, r := range c.Results {
					arrive[r.CallID] = k
				}
				k++
			}
		}
		cleared := map[string]bool{}
		for j, c := range rep.Calls {
			if gaps[j] <= replay.CacheTTL {
				continue
			}
			old := 0
			for _, s := range c.Shown {
				if a, ok := arrive[s.CallID]; ok && s.State != "cleared" && a <= j-5 && !cleared[s.CallID] {
					old += s.Chars
					cleared[s.CallID] = true
				}
			}
			tokens, later := float64(old)/4, float64(len(rep.Calls)-j-1)
			for _, pr := range Pricings() {
				save[pr.Name] += tokens*pr.CacheWrite + tokens*pr.CachedRead*later
			}
		}
	}
	return save
}

// TestResearchClearWhenIdle replays the sets named by HARNESS_RESEARCH_SETS
// under harness and harness with CompactPolicy.ClearWhenIdle at
// replay.CacheTTL (alone, with KeepQuoted, and at 3 × CacheTTL), priced
// with the cache expiring after CacheTTL (HARNESS_RESEARCH_CACHE_TTL
// changes it; 0 prices the cache warm, as the bench does by default)
// (Options.CacheTTL), and prints each one's figures per set
// (docs/design.md, "Cold caches").
func TestResearchClearWhenIdle(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	ttl := replay.CacheTTL
	if v := os.Getenv("HARNESS_RESEARCH_CACHE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("HARNESS_RESEARCH_CACHE_TTL: %v", err)
		}
		ttl = d
	}
	floor, _ := Lookup("floor")
	h, _ := Lookup("harness")
	idle := defaultHarness()
	idle.clearIdle = replay.CacheTTL
	quoted := idle
	quoted.quoted = true
	later := idle
	later.clearIdle = 3 * replay.CacheTTL
	ps := []Preset{floor, h, {Name: "harness+idle", Doc: "research variant", build: idle.build},
		{Name: "harness+idle+quoted", Doc: "research variant", build: quoted.build},
		{Name: "harness+idle/15m", Doc: "research variant", build: later.build}}
	var b strings.Builder
	for _, dir := range strings.Split(dirs, ",") {
		recs, _, err := replay.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Run(context.Background(), recs, &Options{Presets: ps, CacheTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.Rows[2:] {
			fmt.Fprintf(&b, "%-30s %-20s %.3f/%.3f × none, removed %.1f%%/%.1f%%, visible %.1f%%, > 1.01× %d, worst %.3f, breaks %d\n", filepath.Base(dir), r.Preset,
				r.Ratios["openai"], r.Ratios["anthropic"], 100*r.Removed["openai"], 100*r.Removed["anthropic"], 100*r.VisibleShare, r.AboveTolerance, r.Worst, r.CacheBreaks)
		}
	}
	t.Log("\n" + b.String())
}

package benchlab

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/lab/compactrules"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// TestResearchColdCache measures what the replay's warm-cache assumption
// is worth on the sets named by HARNESS_RESEARCH_SETS: the replay counts a
// request's prefix shared with the previous request as cached whatever the
// time between them, while a provider's cache expires (catalog.DefaultCacheLifetime).
// Per set it prints how many requests came more than CacheTTL after the
// one before (replayengine.IdleGaps, from the recorded times), and, for none and
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
		_, reports, err := benchcore.RunReports(context.Background(), benchcore.Options{Presets: []benchcore.Preset{none, h}}, recs)
		if err != nil {
			t.Fatal(err)
		}
		var calls, timed, cold, coldRuns int
		base := map[string][2]float64{}  // price → cost of none, harness
		extra := map[string][2]float64{} // price → what the cold requests add
		for i, rec := range recs {
			gaps := replayengine.IdleGaps(rec)
			runCold := 0
			for p, rep := range reports[i][:2] {
				for _, pr := range benchcore.Pricings() {
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
					if gaps[k] <= catalog.DefaultCacheLifetime {
						continue
					}
					if p == 0 {
						runCold++
					}
					for _, pr := range benchcore.Pricings() {
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
		fmt.Fprintf(&b, "%s: %d runs, %d requests (%d timed), %d after more than %s idle, in %d runs\n", filepath.Base(dir), len(recs), calls, timed, cold, catalog.DefaultCacheLifetime, coldRuns)
		free := coldClearBound(recs, reports)
		fmt.Fprintf(&b, "  a clear at each cold request of the results older than 4 rounds would save at most %.1f%% (openai) / %.1f%% (anthropic) of harness's cost\n",
			100*free["openai"]/base["openai"][1], 100*free["anthropic"]/base["anthropic"][1])
		for _, pr := range benchcore.Pricings() {
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
func coldClearBound(recs []*replay.Recording, reports [][]*replayengine.Report) map[string]float64 {
	save := map[string]float64{}
	for i, rec := range recs {
		rep, gaps := reports[i][1], replayengine.IdleGaps(rec)
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
			if gaps[j] <= catalog.DefaultCacheLifetime {
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
			for _, pr := range benchcore.Pricings() {
				save[pr.Name] += tokens*pr.CacheWrite + tokens*pr.CachedRead*later
			}
		}
	}
	return save
}

// TestResearchClearWhenIdle replays the sets named by HARNESS_RESEARCH_SETS
// under harness, the anchors that keep about its visible share, and
// harness with CompactPolicy.ClearWhenIdle: at catalog.CacheLifetime of the
// recorded model ("auto": 5 minutes for Claude, an hour for OpenAI's
// models), alone, with compactrules.KeepQuoted, keeping 8 rounds at an idle clear, with
// ActiveRounds 6, covered by the savings bank (ClearWhenIdleBanked), and at
// catalog.DefaultCacheLifetime for every model. Each replay is
// priced twice, with the cache expiring after catalog.DefaultCacheLifetime (the bench's
// default; HARNESS_RESEARCH_CACHE_TTL changes the lifetime) and warm
// (Options.NoCacheExpiry), and the test prints each
// row's figures per set and pricing, and for each variant whether it
// passes the rule for a default against harness on that set: cheaper
// under both price models at no less visible evidence (or the points of
// the removable cost it adds per point of visible evidence it loses), no
// run above 1.01 × none, and cheaper than every anchor that shows at
// least as much (docs/design.md, "Cold caches").
func TestResearchClearWhenIdle(t *testing.T) {
	dirs := os.Getenv("HARNESS_RESEARCH_SETS")
	if dirs == "" {
		t.Skip("HARNESS_RESEARCH_SETS is not set")
	}
	variant := func(name string, change func(*benchcore.HarnessConfig)) benchcore.Preset {
		h := benchcore.DefaultHarness()
		change(&h)
		return benchcore.Preset{Name: name, Doc: "research variant", Build: h.Build}
	}
	var ps []benchcore.Preset
	for _, n := range []string{"floor", "harness", "codex", "harness-rs", "crush", "claude-code"} {
		ps = append(ps, mustLookup(t, n))
	}
	const anchors = 4 // ps[2:6]
	ps = append(ps,
		mustLookup(t, "harness-no-idle"),
		variant("harness/quoted", func(h *benchcore.HarnessConfig) { h.Rule = compactrules.KeepQuoted(3) }),
		variant("harness/idle-keep8", func(h *benchcore.HarnessConfig) { h.ClearIdleKeep = 8 }),
		variant("harness/active6", func(h *benchcore.HarnessConfig) { h.Active = 6 }),
		variant("harness/idle-banked", func(h *benchcore.HarnessConfig) { h.ClearIdleBank = true }),
		variant("harness/idle-5m", func(h *benchcore.HarnessConfig) { h.ClearIdle = catalog.DefaultCacheLifetime }))
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
		ttl, _ := o.PricedTTL()
		if ttl == 0 {
			t.Fatal("HARNESS_RESEARCH_CACHE_TTL=0: the test prices the warm cache anyway; give the lifetime of the other pricing")
		}
		presets := benchcore.WithNone(ps)
		cold, warm := benchcore.NewSummary(presets, nil, ttl), benchcore.NewSummary(presets, nil, 0)
		err = benchcore.ReplayAll(context.Background(), benchcore.Options{}, benchcore.Slice(recs), len(recs), presets, false, func(_ int, rec *replay.Recording, reps []*replayengine.Report) {
			warm.Add(rec, reps) // first: cold's add prices the reports cold in place
			cold.Add(rec, reps)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tab := range []*benchcore.Table{cold.Table(), warm.Table()} {
			fmt.Fprintf(&b, "%s, %s:\n", filepath.Base(dir), tab.CacheNote())
			h := tab.Rows[2]
			for _, r := range tab.Rows[2:] {
				fmt.Fprintf(&b, "  %-27s %.3f/%.3f × none, removed %.1f%%/%.1f%%, visible %.1f%%, > 1.01× %d, worst %.3f, breaks %d", r.Preset,
					r.Ratios["openai"], r.Ratios["anthropic"], 100*r.Removed["openai"], 100*r.Removed["anthropic"], 100*r.VisibleShare, r.AboveTolerance, r.Worst, r.CacheBreaks)
				if r.Preset != h.Preset && strings.HasPrefix(r.Preset, "harness+") {
					fmt.Fprintf(&b, "; %s", defaultVerdict(r, h, tab.Rows[3:3+anchors]))
				}
				b.WriteString("\n")
			}
		}
	}
	t.Log("\n" + b.String())
}

// defaultVerdict says how r fares against harness h by the rule for a
// default: cheaper under both price models at no less visible evidence, or
// what it trades (points of the removable cost added per point of visible
// evidence lost); runs above 1.01 × none; the anchors that show at least
// as much and cost no more.
func defaultVerdict(r, h benchcore.Row, anchors []benchcore.Row) string {
	cheaper := r.Ratios["openai"] < h.Ratios["openai"] && r.Ratios["anthropic"] < h.Ratios["anthropic"]
	var v string
	switch dv := 100 * (r.VisibleShare - h.VisibleShare); {
	case cheaper && dv >= 0:
		v = "dominates harness"
	case cheaper:
		v = fmt.Sprintf("trades: +%.1f/+%.1f points removed for %.1f visible (%.1f per point)", 100*(r.Removed["openai"]-h.Removed["openai"]),
			100*(r.Removed["anthropic"]-h.Removed["anthropic"]), dv, 100*(r.Removed["openai"]-h.Removed["openai"])/-dv)
	default:
		v = fmt.Sprintf("not cheaper (%+.3f/%+.3f, visible %+.1f)", r.Ratios["openai"]-h.Ratios["openai"], r.Ratios["anthropic"]-h.Ratios["anthropic"], dv)
	}
	var beaten []string
	for _, a := range anchors {
		if a.VisibleShare >= r.VisibleShare && (a.Ratios["openai"] <= r.Ratios["openai"] || a.Ratios["anthropic"] <= r.Ratios["anthropic"]) {
			beaten = append(beaten, a.Preset)
		}
	}
	if len(beaten) > 0 {
		v += "; an anchor at ≥ its visible costs no more: " + strings.Join(beaten, ", ")
	}
	return v
}

// researchCacheOptions is the cache pricing of the research tests that
// price one way: the bench's default (the cache expires after
// catalog.DefaultCacheLifetime), or HARNESS_RESEARCH_CACHE_TTL's lifetime (0: the warm
// cache, Options.NoCacheExpiry, the pricing of the figures measured before
// caches expired by default). A sweep whose figures HARNESS_RESEARCH_OUT
// keeps must use one file per pricing.
func researchCacheOptions() (benchcore.Options, error) {
	v := os.Getenv("HARNESS_RESEARCH_CACHE_TTL")
	if v == "" {
		return benchcore.Options{}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return benchcore.Options{}, fmt.Errorf("HARNESS_RESEARCH_CACHE_TTL %q: want a lifetime ≥ 0 such as 5m (0: the cache never expires)", v)
	}
	return benchcore.Options{CacheTTL: d, NoCacheExpiry: d == 0}, nil
}

// mustLookup is Lookup(name), failing t when there is no such preset.
func mustLookup(t *testing.T, name string) benchcore.Preset {
	t.Helper()
	p, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

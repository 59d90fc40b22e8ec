package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/replay"
)

// TestLedgerMatchesReplay checks that the ledger's per-request counts,
// taken from the probed views, reproduce the replay's figures exactly on
// every suite scenario, for an append-only preset and a clearing one.
func TestLedgerMatchesReplay(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	c := counter(t)
	for _, name := range []string{"none", "harness+lowwater", "harness+econ", "harness+settle/runs-mid"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			rep, l, err := ledgerReplay(context.Background(), rec, p, c)
			if err != nil {
				t.Fatalf("%s under %s: %v", rec.ID, name, err)
			}
			if len(l.Hidden) != rep.Needles-rep.Visible {
				t.Errorf("%s under %s: ledger hides %d needles, the replay %d", rec.ID, name, len(l.Hidden), rep.Needles-rep.Visible)
			}
			if got := l.Uncached + l.Cached + l.Output; math.Abs(got-rep.Effective) > 1e-6 {
				t.Errorf("%s under %s: ledger %.1f, replay %.1f", rec.ID, name, got, rep.Effective)
			}
			sum := 0.0
			for _, r := range l.Results {
				sum += r.Cost
			}
			if sum > l.Uncached+l.Cached+1e-6 {
				t.Errorf("%s under %s: results cost %.1f, more than the input %.1f", rec.ID, name, sum, l.Uncached+l.Cached)
			}
			for _, lc := range l.Calls {
				// Keeping everything breaks the cache only where the
				// synthesis call withholds the tool schemas.
				if name == "none" && lc.Resent > 0 && !lc.Final {
					t.Errorf("%s: keeping everything re-sent %d tokens at request %d", rec.ID, lc.Resent, lc.Index)
				}
			}
		}
	}
}

// TestResearchLedger prints where the effective tokens of real runs go.
// It needs recorded runs: HARNESS_RESEARCH_DATA=DIR (e.g. the shared
// mini-swe-agent folder), HARNESS_RESEARCH_PRESETS=a,b (default harness).
func TestResearchLedger(t *testing.T) {
	recs := researchRecordings(t)
	presets := []string{"harness"}
	if s := os.Getenv("HARNESS_RESEARCH_PRESETS"); s != "" {
		presets = strings.Split(s, ",")
	}
	c := counter(t)
	var b strings.Builder
	for _, rec := range recs {
		for _, name := range presets {
			p, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			rep, l, err := ledgerReplay(context.Background(), rec, p, c)
			if err != nil {
				t.Fatal(err)
			}
			writeLedger(&b, rec, rep, l)
		}
	}
	t.Log("\n" + b.String())
}

func writeLedger(b *strings.Builder, rec *replay.Recording, rep *replay.Report, l *ledger) {
	total := l.Uncached + l.Cached + l.Output
	in, cached := 0, 0
	for _, c := range l.Calls {
		in += c.Input
		cached += c.Cached
	}
	fmt.Fprintf(b, "== %s under %s: %d requests, effective %.0f = uncached %.0f (%.0f%%) + 0.1×cached %.0f (%.0f%%) + 4×output %.0f (%.0f%%)\n",
		rec.ID, rep.Policy, len(l.Calls), total, l.Uncached, 100*l.Uncached/total, l.Cached, 100*l.Cached/total, l.Output, 100*l.Output/total)
	fmt.Fprintf(b, "   tool messages cost %.0f (%.0f%% of the input cost); cache breaks %d, re-sent %d tokens; last request %d tokens\n",
		l.ResultCost, 100*l.ResultCost/(l.Uncached+l.Cached), l.Breaks, l.BreakTokens, l.Calls[len(l.Calls)-1].Input)
	// Where the re-read cost sits: cached tokens by request decile.
	fmt.Fprintf(b, "   per request (every 5th; uncached = new + re-sent):\n     idx  input  cached  uncached  resent  results(cached)  output  effective\n")
	for i, c := range l.Calls {
		if i%5 == 0 || c.Resent > 0 || i == len(l.Calls)-1 {
			fmt.Fprintf(b, "     %3d  %5d  %6d  %8d  %6d  %7d(%6d)  %6d  %9.0f\n", c.Index, c.Input, c.Cached, c.Uncached, c.Resent, c.Results, c.ResultsCached, c.Output, c.Effective)
		}
	}
	fmt.Fprintf(b, "   costliest results (cost = tokens at 1 + 0.1 per later request):\n     cost   tokens  arrive  requests  needles lastuse  tool args\n")
	for i, r := range l.costliest() {
		if i == 12 {
			break
		}
		fmt.Fprintf(b, "     %6.0f %6d  %6d  %8d  %7d %7d  %s %s\n", r.Cost, r.Tokens, r.Arrive, r.Requests, r.Needles, r.LastUse, r.Tool, clipArgs(r.Args, 70))
	}
	// How soon the agent uses what it reads.
	var uses []int
	for _, r := range l.Results {
		if r.LastUse >= 0 {
			uses = append(uses, r.LastUse)
		}
	}
	sort.Ints(uses)
	args := map[string]string{}
	for _, r := range l.Results {
		args[r.CallID] = r.Args
	}
	for _, n := range l.Hidden {
		fmt.Fprintf(b, "   hidden at use: %q (request %d) from %s\n", n.Text, n.Call+1, clipArgs(args[n.CallID], 80))
	}
	hist := map[string]int{}
	for _, u := range uses {
		switch {
		case u <= 1:
			hist["≤1"]++
		case u <= 3:
			hist["2–3"]++
		case u <= 10:
			hist["4–10"]++
		default:
			hist[">10"]++
		}
	}
	fmt.Fprintf(b, "   results with needles: %d of %d; latest first use after arrival (requests): ≤1 %d, 2–3 %d, 4–10 %d, >10 %d; max %v\n\n",
		len(uses), len(l.Results), hist["≤1"], hist["2–3"], hist["4–10"], hist[">10"], tail(uses))
}

func tail(xs []int) []int {
	if len(xs) > 5 {
		return xs[len(xs)-5:]
	}
	return xs
}

func clipArgs(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// TestResearchBounds prints, for real runs (HARNESS_RESEARCH_DATA), what
// policies that know the future would cost: bounds on what any honest
// policy can reach at full visible retention, not policies. They read
// the needles (what the agent will use) before replaying:
//   - oracle-arrival: at arrival, results the agent will use are shown
//     whole and every other one empty;
//   - oracle-lines: at arrival, each result is cut to the lines holding
//     the needles the agent will take from it;
//   - oracle-settle: guard.Settle (default sizes) that keeps exactly the
//     results the agent will use after its first reply;
//   - oracle-settle-min: the same, every other result settled to its
//     marker alone.
func TestResearchBounds(t *testing.T) {
	recs := researchRecordings(t)
	c := counter(t)
	none, _ := Lookup("none")
	var b strings.Builder
	for _, rec := range recs {
		needles := replay.Needles(rec)
		words := map[string][]string{}
		for _, n := range needles {
			words[n.CallID] = append(words[n.CallID], n.Text)
		}
		cutTo := func(keep func(id, text string) string) func(env replay.Env) (*replay.Config, error) {
			return func(env replay.Env) (*replay.Config, error) {
				cfg, err := defaultHarness().build(env)
				if err != nil {
					return nil, err
				}
				cfg.Guards = append([]harness.Guard{func(next harness.ToolFunc) harness.ToolFunc {
					return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
						res, err := next(ctx, call)
						if err == nil && res != nil {
							if text := res.ModelText(); keep(call.ID, text) != text {
								setModel(res, keep(call.ID, text), harness.Cut{Kind: harness.CutTruncated, By: "oracle", Locator: "call:" + call.ID})
							}
						}
						return res, err
					}
				}}, cfg.Guards...)
				return cfg, nil
			}
		}
		bounds := []replay.Policy{
			{Name: "oracle-arrival", New: cutTo(func(id, text string) string {
				if len(words[id]) > 0 {
					return text
				}
				return ""
			})},
			{Name: "oracle-lines", New: cutTo(func(id, text string) string {
				var keep []string
				for _, l := range strings.Split(text, "\n") {
					for _, w := range words[id] {
						if strings.Contains(l, w) {
							keep = append(keep, l)
							break
						}
					}
				}
				return strings.Join(keep, "\n")
			})},
			{Name: "oracle-settle", New: oracleSettle(0, 0, 0, words)},
			{Name: "oracle-settle-min", New: oracleSettle(1, 1, 1, words)},
		}
		base, err := replay.Replay(context.Background(), rec, none.Policy(), &replay.Options{Counter: c, Needles: needles})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range bounds {
			rep, err := replay.Replay(context.Background(), rec, p, &replay.Options{Counter: c, Needles: needles})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%-26s %-17s %.3f × none, visible %d/%d\n", rec.ID, p.Name, rep.Effective/base.Effective, rep.Visible, rep.Needles)
		}
	}
	t.Log("\n" + b.String())
}

func oracleSettle(over, head, tail int, words map[string][]string) func(env replay.Env) (*replay.Config, error) {
	return func(env replay.Env) (*replay.Config, error) {
		cfg, err := defaultHarness().build(env)
		if err != nil {
			return nil, err
		}
		s := &guard.Settle{Over: over, Head: head, Tail: tail, Counter: env.Counter,
			Skip: func(call harness.ToolCall, _ *harness.ToolResult) bool { return len(words[call.ID]) > 0 }}
		cfg.Policies = append([]harness.ViewPolicy{s}, cfg.Policies...)
		return cfg, nil
	}
}

// researchRecordings loads the recorded runs of HARNESS_RESEARCH_DATA, or
// skips the test when it is not set: research tests read data the project
// does not ship.
func researchRecordings(t *testing.T) []*replay.Recording {
	t.Helper()
	dir := os.Getenv("HARNESS_RESEARCH_DATA")
	if dir == "" {
		t.Skip("HARNESS_RESEARCH_DATA is not set")
	}
	recs, _, err := replay.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

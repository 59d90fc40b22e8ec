package benchcore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/replay"
)

// TestAuditHeadline: the audit opens with what harness-proxy would have
// saved, computed from the presets' own figures on shipped runs (each
// recording's none and harness-proxy cells, priced at its model's list
// price), and the launcher of the agent that made them.
func TestAuditHeadline(t *testing.T) {
	px, err := Lookup(proxyPresetName)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Lookup("harness")
	for _, tc := range []struct {
		name    string
		path    string
		model   string // replaces the recordings' model when set
		presets []Preset
		command string
		ok      bool
	}{
		{"claude code", "../../bench/data/claude-code/conneroisu__templar", "", []Preset{px}, "harness claude", true},
		{"codex", "../../bench/data/codex/bumpy-croc__ai-trading-bot", "", []Preset{px, h}, "harness codex", true},
		{"no list price", "../../bench/data/claude-code/conneroisu__templar", "homebrew-7b", []Preset{px}, "harness claude", true},
		{"no harness-proxy", "../../bench/data/claude-code/Johannes0501__openshrooly", "", []Preset{h}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := replay.Load(tc.path)
			if err != nil || len(recs) == 0 {
				t.Fatalf("load %s: %v", tc.path, err)
			}
			if tc.model != "" {
				for _, r := range recs {
					r.Model = tc.model
				}
			}
			report, err := AuditRecordings(context.Background(), recs, &Options{Presets: tc.presets})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := report.Headline(nil)
			if ok != tc.ok {
				t.Fatalf("Headline ok = %v, want %v", ok, tc.ok)
			}
			var text strings.Builder
			if err := report.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if !ok {
				if strings.HasPrefix(text.String(), "harness proxy would have") {
					t.Errorf("a headline without the harness-proxy preset:\n%s", firstLines(text.String(), 3))
				}
				return
			}
			want := expectedHeadline(t, report)
			if got.Calls != want.Calls || got.InputNone != want.InputNone || got.InputProxy != want.InputProxy || got.Priced != want.Priced ||
				!nearly(got.DollarsNone, want.DollarsNone) || !nearly(got.DollarsProxy, want.DollarsProxy) || !nearly(got.SavedShare, want.SavedShare) {
				t.Errorf("headline %+v\nwant     %+v", got, want)
			}
			if got.Command != tc.command {
				t.Errorf("command %q, want %q", got.Command, tc.command)
			}
			if want.InputProxy >= want.InputNone || want.SavedShare <= 0 {
				t.Errorf("harness-proxy saved nothing on %s: the fixture should show a saving", tc.path)
			}
			head := firstLines(text.String(), 3)
			for _, s := range []string{fmt.Sprintf("cut what this history cost by %.1f%%", 100*want.SavedShare), num(want.InputNone-want.InputProxy) + " fewer input tokens",
				"run your agent through harness: " + tc.command} {
				if !strings.Contains(head, s) {
					t.Errorf("the headline does not say %q:\n%s", s, head)
				}
			}
			if priced := want.Priced > 0; priced != strings.Contains(head, usd(want.DollarsNone-want.DollarsProxy)+" of "+usd(want.DollarsNone)) {
				t.Errorf("dollars shown %v, want %v:\n%s", !priced, priced, head)
			}
			if i := strings.Index(text.String(), "== "); i < len(head) {
				t.Errorf("the expert tables come before the headline ends")
			}
			var page strings.Builder
			if err := report.WriteHTML(&page); err != nil {
				t.Fatal(err)
			}
			h1, p := strings.Index(page.String(), "<h1>"), strings.Index(page.String(), `<p class="headline">harness proxy would have cut what this history cost by `+fmt.Sprintf("%.1f%%", 100*want.SavedShare))
			if p < h1 || p > strings.Index(page.String(), `<p class="note">`) {
				t.Errorf("the HTML page does not open with the headline")
			}
		})
	}
}

// expectedHeadline sums the none and harness-proxy cells of each
// recording's audit, pricing each at its model's list price.
func expectedHeadline(t *testing.T, r *AuditReport) Headline {
	t.Helper()
	var h Headline
	prices := catalog.ListPrices()
	for _, a := range r.Audits {
		none, proxy := presetIndex(a.Presets, "none"), presetIndex(a.Presets, proxyPresetName)
		if none < 0 || proxy < 0 {
			t.Fatalf("presets %v", a.Presets)
		}
		h.Calls += a.Calls
		h.InputNone += a.Costs[none].Input
		h.InputProxy += a.Costs[proxy].Input
		if p, _, ok := prices.Lookup(a.Model); ok {
			h.Priced++
			cost := func(f Figures) float64 {
				return (float64(f.Input-f.Cached)*p.Input + float64(f.Cached)*p.CachedInput + float64(f.Output)*p.Output) / 1e6
			}
			h.DollarsNone += cost(a.Costs[none])
			h.DollarsProxy += cost(a.Costs[proxy])
		}
	}
	if h.Priced > 0 {
		h.SavedShare = 1 - h.DollarsProxy/h.DollarsNone
	} else {
		h.SavedShare = 1 - r.Total.Rows[rowIndex(r.Total.Rows, proxyPresetName)].Ratios[defaultPricings[0]]
	}
	return h
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func TestCounted(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 recordings"}, {1, "1 recording"}, {2, "2 recordings"}, {12345, "12,345 recordings"}} {
		if got := counted(c.n, "recording"); got != c.want {
			t.Errorf("counted(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

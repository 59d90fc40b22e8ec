package benchcore

import (
	"context"
	"math"
	"net/http"
	"testing"

	"github.com/agentharness/harness/bench/data"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/replay"
)

// proxyPresetTolerance bounds how far, as a share of the preset's input
// tokens, what reached the upstream through harness proxy may be from the
// harness-proxy preset on one recording. Measured on the shipped Claude
// Code, Codex and mini-swe-agent runs: within 0.25% on every one, from
// the spill previews, which name an absolute path under the proxy's
// workspace (a temporary directory whose name varies in length) where the
// replay names its own spill locator. (Claude Code's a9185eb7 was 0.70%
// apart while the proxy's Collapse did not see the round's earlier
// results, TestCollapseWithinARound in package proxy.)
const proxyPresetTolerance = 0.005

// TestProxyPresetMatchesProxy replays shipped recordings (Claude Code,
// Codex, mini-swe-agent) under the harness-proxy preset and through the
// real proxy (Options.Through in front of proxy.New, what harness bench
// --through measures) and asserts the two agree per recording: the same
// calls and output, input tokens within proxyPresetTolerance. The bench
// sends its requests through the proxy without pauses, so both sides run
// without the idle clear (the preset's noClearIdle, the proxy's
// NoClearWhenIdle).
func TestProxyPresetMatchesProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("replays shipped recordings through the proxy")
	}
	ctx := context.Background()
	var recs []*replay.Recording
	for _, agent := range []string{"claude-code", "codex", "mini-swe-agent"} {
		rs, err := data.Load(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rs...)
	}
	th := throughFront(t, func(upstream string) http.Handler {
		p, err := proxy.New(&proxy.Options{Upstream: upstream, Workspace: t.TempDir(), NoClearWhenIdle: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	})
	pre := proxyPreset()
	pre.Build = proxyConfig{noClearIdle: true}.Build
	tab, err := Run(ctx, recs, &Options{Presets: []Preset{pre}, Through: th})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 3 || tab.Rows[1].Preset != proxyPresetName {
		t.Fatalf("rows: %+v", tab.Rows)
	}
	saved := 0
	for _, run := range tab.Runs {
		n, p, x := run.Cells[0], run.Cells[1], run.Cells[2]
		if p.Calls != x.Calls || p.Output != x.Output {
			t.Errorf("%s: the preset replayed %d calls (%d output tokens), the proxy %d (%d)", run.Recording, p.Calls, p.Output, x.Calls, x.Output)
		}
		d := float64(x.Input-p.Input) / float64(p.Input)
		t.Logf("%s: none %d, harness-proxy %d, through the proxy %d input tokens (%+.2f%%)", run.Recording, n.Input, p.Input, x.Input, 100*d)
		if math.Abs(d) > proxyPresetTolerance {
			t.Errorf("%s: through the proxy %d input tokens, the preset %d: %+.2f%%, over ±%.0f%%", run.Recording, x.Input, p.Input, 100*d, 100*proxyPresetTolerance)
		}
		if p.Input < n.Input {
			saved++
		}
	}
	if saved < len(tab.Runs)/2 {
		t.Errorf("the preset saves input on %d of %d recordings: it does not replay the proxy's rule", saved, len(tab.Runs))
	}
}

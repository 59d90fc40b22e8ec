package benchcore

import (
	"context"
	"testing"
	"time"

	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/replay"
)

// compactOf returns the CompactPolicy among cfg's policies, or nil.
func compactOf(cfg *replay.Config) *policy.CompactPolicy {
	for _, p := range cfg.Policies {
		switch c := p.(type) {
		case *policy.CompactPolicy:
			return c
		case spillCleared:
			return c.CompactPolicy
		}
	}
	return nil
}

// TestIdleClearWaitsForPricedCache: the harness and harness-proxy presets
// clear when idle after the recorded model's cache lifetime
// (catalog.CacheLifetime), but never sooner than the cache the replay is
// priced with lives, and not at all when it is priced as never expiring
// or the model's lifetime is unknown.
func TestIdleClearWaitsForPricedCache(t *testing.T) {
	const claude, gpt = "claude-sonnet-4-5", "gpt-5"
	for _, tc := range []struct {
		name  string
		env   replay.Env
		after time.Duration // 0: no idle clear
	}{
		{"claude, unsaid", replay.Env{Model: claude}, 5 * time.Minute},
		{"claude, 5m", replay.Env{Model: claude, CacheTTL: 5 * time.Minute}, 5 * time.Minute},
		{"claude, 1h", replay.Env{Model: claude, CacheTTL: time.Hour}, time.Hour},
		{"claude, warm", replay.Env{Model: claude, NoCacheExpiry: true}, 0},
		{"gpt, 5m", replay.Env{Model: gpt, CacheTTL: 5 * time.Minute}, time.Hour},
		{"gpt, 2h", replay.Env{Model: gpt, CacheTTL: 2 * time.Hour}, 2 * time.Hour},
		{"unknown model, 1h", replay.Env{Model: "deepseek-chat", CacheTTL: time.Hour}, 0},
	} {
		for _, name := range []string{"harness", "harness-proxy"} {
			cfg, err := mustLookup(t, name).Build(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			got := compactOf(cfg).IdleAfter() // nil (the proxy's, off): 0
			if got != tc.after {
				t.Errorf("%s, %s: clears when idle after %v, want %v", name, tc.name, got, tc.after)
			}
		}
	}
	h := DefaultHarness()
	h.ClearIdle = 5 * time.Minute
	if cfg, _ := h.Build(replay.Env{Model: claude, NoCacheExpiry: true}); compactOf(cfg).IdleAfter() != 5*time.Minute {
		t.Error("a threshold the preset sets itself was overridden by the priced lifetime")
	}
}

// TestIdleClearPricedWarm replays a Claude recording with an 11-minute
// pause: priced with the 5-minute cache, harness's idle clear fires there
// (its figures differ from harness-no-idle's); priced with an hour's cache
// or a warm one, harness costs exactly what harness-no-idle costs, so no
// idle clear pays a miss the pricing never charges keeping everything.
func TestIdleClearPricedWarm(t *testing.T) {
	rec := pausedRecording(t, "claude-sonnet-4-5")
	ps := []Preset{mustLookup(t, "harness"), mustLookup(t, "harness-no-idle")}
	for _, tc := range []struct {
		name  string
		opts  Options
		fires bool
	}{
		{"5m", Options{Presets: ps}, true},
		{"1h", Options{Presets: ps, CacheTTL: time.Hour}, false},
		{"warm", Options{Presets: ps, NoCacheExpiry: true}, false},
	} {
		tab, err := Run(context.Background(), []*replay.Recording{rec}, &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		h, no := tab.Rows[1], tab.Rows[2]
		differ := h.Cached != no.Cached || h.Input != no.Input
		if differ != tc.fires {
			t.Errorf("priced %s: harness cached %d input %d, harness-no-idle %d / %d; want the idle clear to fire: %v",
				tc.name, h.Cached, h.Input, no.Cached, no.Input, tc.fires)
		}
	}
}

// pausedRecording returns the suite's longest recording as a run of
// model, one minute between calls but 11 between the last third's first
// call and the one before.
func pausedRecording(t *testing.T, model string) *replay.Recording {
	t.Helper()
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	for _, r := range recs {
		if r.Calls() > rec.Calls() {
			rec = r
		}
	}
	rec.Model = model
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k, pause := 0, 2*rec.Calls()/3
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			c.Time = t0.Add(time.Duration(k) * time.Minute)
			if k >= pause {
				c.Time = c.Time.Add(10 * time.Minute)
			}
			k++
		}
	}
	return rec
}

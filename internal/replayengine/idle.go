package replayengine

import (
	"time"

	"github.com/agentharness/harness/replay"
)

// IdleGaps returns, per model call of rec in order, the time between the
// previous call's response and this call's, as the source recorded them:
// the agent's own work and the user's pauses, plus the model's time to
// answer. It is 0 for the first call and for a call whose source or
// predecessor records no time. A gap over the provider's cache lifetime
// (catalog.DefaultCacheLifetime by default) means the request found its
// prompt cache cold.
func IdleGaps(rec *replay.Recording) []time.Duration {
	var out []time.Duration
	var prev time.Time
	for _, t := range rec.Turns {
		for _, c := range t.Calls {
			var gap time.Duration
			if !prev.IsZero() && !c.Time.IsZero() && c.Time.After(prev) {
				gap = c.Time.Sub(prev)
			}
			out = append(out, gap)
			prev = c.Time
		}
	}
	return out
}

// PriceCold prices as cold the first request of r sent after each pause
// longer than ttl (gaps from IdleGaps of the recording, by the recorded
// call's Index; harness bench and harness replay pass their --cache-ttl):
// its prefix is no longer cached, so its Cached goes to 0, and the
// report's usage and effective tokens follow. A ttl of 0 changes nothing
// (a cache that never expires). That request is the recorded
// call's own, or the reveal round the replay put right before it (a
// deferred tool's first call, Index 0): the pause comes before both, so a
// live run's reveal finds the cache cold and the recorded call, right
// after it, warm.
func (r *Report) PriceCold(gaps []time.Duration, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	changed := false
	for i := range r.Calls {
		k := r.Calls[i].Index - 1
		if k < 0 || k >= len(gaps) || gaps[k] <= ttl {
			continue
		}
		first := i
		for first > 0 && r.Calls[first-1].Index == 0 {
			first--
		}
		if c := &r.Calls[first]; c.Cached > 0 {
			r.Usage.Cached -= c.Cached
			c.Cached, changed = 0, true
		}
	}
	if changed {
		r.Effective = r.Usage.Effective()
	}
}

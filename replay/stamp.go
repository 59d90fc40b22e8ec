package replay

import "time"

// CacheTTL is how long a provider keeps a prompt prefix cached after its
// last use, by default: Anthropic's default cache lives 5 minutes, and
// OpenAI's automatic cache is cleared after 5 to 10 minutes of inactivity.
// A request sent longer than this after the one before finds the cache
// cold: it pays for its whole prefix again.
const CacheTTL = 5 * time.Minute

// parseStamp reads an RFC 3339 timestamp (fractional seconds optional),
// the zero time when s is empty or not one.
func parseStamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// IdleGaps returns, per model call of rec in order, the time between the
// previous call's response and this call's, as the source recorded them:
// the agent's own work and the user's pauses, plus the model's time to
// answer. It is 0 for the first call and for a call whose source or
// predecessor records no time. A gap over CacheTTL means the request
// found the provider's prompt cache cold.
func IdleGaps(rec *Recording) []time.Duration {
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

package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads the wait a response asks for: "retry-after-ms"
// (milliseconds, which both OpenAI and Anthropic send), else "Retry-After"
// as delay-seconds or an HTTP-date (RFC 9110 §10.2.3). A date in the past
// means no wait. ok is false when neither header holds a usable value.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if d, ok := parseNumber(v, float64(time.Millisecond)); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := parseNumber(v, float64(time.Second)); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// parseNumber parses a non-negative decimal count of unit. Huge values
// saturate instead of overflowing, so the caller's limit rejects them.
func parseNumber(v string, unit float64) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !(f > 0 && math.IsInf(f, 1)) {
		return 0, false
	}
	if math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f*unit >= math.MaxInt64 || math.IsInf(f, 1) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(f * unit), true
}

package replay

import "time"

// parseStamp reads an RFC 3339 timestamp (fractional seconds optional),
// the zero time when s is empty or not one.
func parseStamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

package mcptool

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseTimeout: a server's "timeout" is read or refused, never a
// panic, and never negative (a huge number of seconds included).
func FuzzParseTimeout(f *testing.F) {
	for _, s := range []string{`30`, `0.5`, `"30s"`, `"2m"`, `null`, `-1`, `"-5s"`, `1e300`, `9223372037`, `"x"`, `true`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := parseTimeout(json.RawMessage(raw))
		if err == nil && d < 0 {
			t.Fatalf("parseTimeout(%s) = %s", raw, d)
		}
		var secs float64
		if json.Unmarshal(raw, &secs) == nil && secs > 0 && err != nil && strings.Contains(err.Error(), "negative") {
			t.Fatalf("parseTimeout(%s): %v", raw, err)
		}
	})
}

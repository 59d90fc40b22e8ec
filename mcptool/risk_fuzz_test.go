package mcptool

import (
	"testing"
)

// FuzzParseRisk: a risk from a config is read or refused, never a panic,
// and what harness.Risk.String prints of a risk read parses back to it.
func FuzzParseRisk(f *testing.F) {
	for _, s := range []string{"read-only", "readonly|network", "destructive,idempotent", "Read_Only + Network", "", "|", "bogus", "read-only|bogus"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRisk(s)
		if err != nil || r == 0 {
			return
		}
		if again, err := parseRisk(r.String()); err != nil || again != r {
			t.Fatalf("%q → %v → %q → %v, %v", s, r, r.String(), again, err)
		}
	})
}

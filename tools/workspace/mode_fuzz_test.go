package workspace

import "testing"

// FuzzParseMode: --mode is read or refused, never a panic, and a mode
// read prints back to itself.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"ask", "auto", "read-only", " RO ", "readonly", "", "yes", "Auto\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err != nil {
			return
		}
		if again, err := ParseMode(m.String()); err != nil || again != m {
			t.Fatalf("%q → %v → %q → %v, %v", s, m, m.String(), again, err)
		}
	})
}

package mcptool

import (
	"strings"
	"testing"
)

// FuzzExpandVars: expansion never panics, and a string without "${" comes
// back unchanged.
func FuzzExpandVars(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "${", "${}", "$${A}", "${A}${B:-x}", "${A:-${B}}", "}${A"} {
		f.Add(s)
	}
	lookup := func(k string) (string, bool) {
		if k == "A" {
			return "value", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandVars(s, lookup)
		if !strings.Contains(s, "${") && (err != nil || out != s) {
			t.Fatalf("%q changed to %q (%v)", s, out, err)
		}
	})
}

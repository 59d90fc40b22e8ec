package replayengine

import (
	"testing"
)

// FuzzWords checks the needle tokeniser: every word is a substring of the
// text, long enough, and made of word characters only.
func FuzzWords(f *testing.F) {
	f.Add("src/sqlfluff/rules/L060.py _eval_single_select Überprüfung \xff abcdef")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		words(s, func(w string) {
			if len([]rune(w)) < minNeedleChars || !containsWord(s, w) {
				t.Fatalf("bad word %q", w)
			}
			words(w, func(x string) {
				if x != w {
					t.Fatalf("word %q splits into %q", w, x)
				}
			})
		})
	})
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}

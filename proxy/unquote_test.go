package proxy

import (
	"encoding/json"
	"strings"
	"testing"
)

// unquote decodes as encoding/json does: the same string, and an error
// where json.Unmarshal refuses the literal.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a\nb\tc\\d\"e\/f"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`,
		`"\ude00\ud83d"`, `"\uZZZZ"`, `"\'"`, `"a\"`, `"\"`, `"tab	in"`, "\"\xff\xfe\\n\"", `"\b\f\r"`, `"x"y"`, `""`, `"`, `x`,
		`"\ud83d\ud83d\ude00"`, `"\u12"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		got, err := unquote([]byte(lit))
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		if strings.TrimSpace(lit) != lit {
			return // a span holds the literal alone
		}
		if werr != nil {
			if err == nil && strings.Contains(lit, `\`) {
				t.Fatalf("unquote(%q) = %q, encoding/json refuses it: %v", lit, got, werr)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json %q", lit, got, err, want)
		}
	})
}

func BenchmarkUnquote(b *testing.B) {
	lit, _ := json.Marshal(strings.Repeat("line of a tool result with \"quotes\" and a tab\there\n", 600))
	b.Run("unquote", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			if _, err := unquote(lit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

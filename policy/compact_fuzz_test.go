package policy

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompactFitTokens checks the summary cut: never over the limit, a
// prefix of the input (plus the cut mark), valid UTF-8 when the input is.
func FuzzCompactFitTokens(f *testing.F) {
	for _, s := range []string{"", "hello world", strings.Repeat("abc def ", 200), "日本語のテキストです。", "\xff\xfe", "a\u0301e\u0301"} {
		f.Add(s, 5)
		f.Add(s, 0)
	}
	c := &compaction{compactConfig: compactConfig{counter: o200k(f), factor: 1.3}}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = limit%1000 + 2
		if limit < 2 {
			limit = -limit
		}
		out, cut := c.fitTokens(s, limit)
		if !cut {
			if out != s {
				t.Fatalf("uncut text changed")
			}
			return
		}
		body, ok := strings.CutSuffix(out, " …")
		if !ok || !strings.HasPrefix(s, body) {
			t.Fatalf("cut %q is not a prefix of %q", out, s)
		}
		if n := int(float64(c.counter.Count(out))*1.3 + 0.999999); n > limit && body != "" {
			t.Fatalf("%d tokens over the limit %d", n, limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("split a character: %q", out)
		}
	})
}

// FuzzCompactClip checks the excerpt cut used in summary renderings.
func FuzzCompactClip(f *testing.F) {
	f.Add("hello", 3)
	f.Add("日本語", 1)
	f.Add("\xff", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		out := clip(s, n)
		if utf8.RuneCountInString(s) <= n {
			if out != s {
				t.Fatal("short text changed")
			}
			return
		}
		if !strings.HasPrefix(out, s[:runeBounds(s)[n]]) || !strings.Contains(out, "more characters)") {
			t.Fatalf("clip(%q, %d) = %q", s, n, out)
		}
	})
}

// FuzzQuotedLines checks the lines a rule is told the agent quoted: in
// order, each a line of the text holding a quoted word, and every such line
// listed.
func FuzzQuotedLines(f *testing.F) {
	f.Add("a\nfoo_bar1 x\nb\n", "foo_bar1")
	f.Add("no newline at all fooBar22", "fooBar22")
	f.Add("\n\n\nx_y_z12\n\n", "x_y_z12")
	f.Add("日本語 ident_9x\n\xff\xfe\n", "ident_9x")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, word string) {
		quoted := map[string]bool{word: true}
		got := quotedLines(text, quoted)
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		var want []int
		for i, l := range lines {
			if holdsQuoted(l, quoted) {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("quotedLines = %v, want %v", got, want)
		}
	})
}

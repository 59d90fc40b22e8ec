package policy

import (
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

// FuzzQuotedDigest checks the KeepQuoted digest: "" exactly when no line
// holds a quoted word; otherwise every line holding one is kept, every
// kept line is a line of the text, in order, and the digest is the same
// on every call.
func FuzzQuotedDigest(f *testing.F) {
	f.Add("a\nfoo_bar1 x\nb\n", "foo_bar1", 1)
	f.Add("no newline at all fooBar22", "fooBar22", 3)
	f.Add("\n\n\nx_y_z12\n\n", "x_y_z12", 0)
	f.Add("日本語 ident_9x\n\xff\xfe\n", "ident_9x", 2)
	f.Add("", "", -1)
	f.Fuzz(func(t *testing.T, text, word string, ctx int) {
		ctx %= 8
		quoted := map[string]bool{word: true}
		out := quotedDigest(text, quoted, ctx)
		if out != quotedDigest(text, quoted, ctx) {
			t.Fatal("two digests of the same input differ")
		}
		lines := strings.SplitAfter(text, "\n")
		holding := 0
		for _, l := range lines {
			if holdsQuoted(l, quoted) {
				holding++
				if !strings.Contains(out, strings.TrimSuffix(l, "\n")) {
					t.Fatalf("quoted line %q not kept in %q", l, out)
				}
			}
		}
		if (holding == 0) != (out == "") {
			t.Fatalf("%d quoted lines, digest %q", holding, out)
		}
		// Every kept line is a line of the text, in order.
		next := 0
		for _, l := range strings.SplitAfter(out, "\n") {
			if l == "" || l == "…\n" || (strings.HasPrefix(l, "[lines ") && strings.HasSuffix(l, "]\n")) {
				continue
			}
			body := strings.TrimSuffix(l, "\n")
			found := false
			for ; next < len(lines); next++ {
				if strings.TrimSuffix(lines[next], "\n") == body {
					found = true
					next++
					break
				}
			}
			if !found {
				t.Fatalf("kept line %q is not a line of the text (in order)", body)
			}
		}
	})
}

package workspace

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadPage pages arbitrary content with a small page budget and checks
// that the pages number every line exactly once, in order, as valid UTF-8
// within the page budget, and that the line count is the one countLines
// gives.
func FuzzReadPage(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\nb", "\n\n\n", "a\r\nb\r\n", "\r\n", "x\xff\xfey\n", strings.Repeat("é", 300) + "\nz",
		strings.Repeat("line\n", 200), "\x00", "no newline at all " + strings.Repeat("w", 500)} {
		f.Add([]byte(s), 3)
		f.Add([]byte(s), 1)
	}
	w := &Workspace{opts: (&Options{ReadMaxBytes: 1, MaxLineBytes: 64}).withDefaults()}
	f.Fuzz(func(t *testing.T, content []byte, limit int) {
		if limit < 1 || limit > 50 {
			limit = 7
		}
		total := countLines(content)
		next := int64(1)
		for pages := 0; ; pages++ {
			if pages > len(content)+2 {
				t.Fatal("paging does not advance")
			}
			p, err := w.readPage(context.Background(), bytes.NewReader(content), next, int64(limit), 8)
			if err != nil {
				t.Fatal(err)
			}
			if p.total != total {
				t.Fatalf("total %d, countLines %d", p.total, total)
			}
			if p.shown == 0 {
				if next <= total {
					t.Fatalf("empty page at line %d of %d", next, total)
				}
				break
			}
			if p.shown > 1 && len(p.text) > w.opts.ReadMaxBytes-footerReserve-8 {
				t.Fatalf("page of %d bytes over its budget", len(p.text))
			}
			if !utf8.ValidString(p.text) {
				t.Fatalf("invalid UTF-8 in %q", p.text)
			}
			lines := strings.Split(strings.TrimSuffix(p.text, "\n"), "\n")
			if int64(len(lines)) != p.shown {
				t.Fatalf("%d lines shown, page says %d: %q", len(lines), p.shown, p.text)
			}
			for i, l := range lines {
				num, text, ok := strings.Cut(l, "\t")
				n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
				if !ok || err != nil || n != next+int64(i) {
					t.Fatalf("line %d numbered %q, want %d", i, num, next+int64(i))
				}
				if len(text) > w.opts.MaxLineBytes+60 {
					t.Fatalf("line of %d bytes not cut", len(text))
				}
			}
			next += p.shown
		}
		if next != total+1 {
			t.Fatalf("pages covered lines 1-%d of %d", next-1, total)
		}
	})
}

// FuzzGlob compiles arbitrary patterns and matches them against arbitrary
// paths: no panic, expansion bounded, and a literal pattern matches itself.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"*.go", "**/*.go", "{a,b}/**/c?[xy]", "[", "{", "}", "{a,{b,c}}", "**/**/**", "a/b/c", "\\*", "[^a]"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		m, err := compileGlob(pattern)
		if err != nil {
			return
		}
		if len(m.alts) > maxBraceExpansions {
			t.Fatalf("%d alternatives", len(m.alts))
		}
		m.match(name)
		if !strings.ContainsAny(pattern, "*?[]{}\\") && pattern != "" && !strings.Contains(pattern, "//") &&
			!strings.HasPrefix(pattern, "/") && !strings.HasSuffix(pattern, "/") && !m.match(pattern) {
			t.Fatalf("literal pattern %q does not match itself", pattern)
		}
	})
}

// FuzzShowLine checks grep's line window: valid UTF-8, bounded size, and
// the match visible when it is short.
func FuzzShowLine(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 1000)+"NEEDLE"+strings.Repeat("b", 1000)), 1000, 1006)
	f.Add([]byte("short NEEDLE"), 6, 12)
	f.Add([]byte(strings.Repeat("é", 600)), 0, 2)
	f.Fuzz(func(t *testing.T, line []byte, start, end int) {
		var loc []int
		if start >= 0 && end >= start && end <= len(line) {
			loc = []int{start, end}
		}
		s := showLine(line, loc)
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8: %q", s)
		}
		if len(line) > grepShowBytes && len(s) > 3*grepShowBytes+64 {
			t.Fatalf("window of %d bytes", len(s))
		}
		if loc != nil && end-start <= grepShowBytes/2 && end-start > 0 && utf8.Valid(line) {
			if !strings.Contains(s, string(line[start:end])) && utf8.Valid(line[start:end]) && utf8.RuneStart(line[start]) {
				t.Fatalf("match %q not shown in %q", line[start:end], s)
			}
		}
	})
}

// FuzzCutUTF8 checks the cut never splits a rune of valid text and never
// exceeds n.
func FuzzCutUTF8(f *testing.F) {
	f.Add([]byte("héllo wörld"), 2)
	f.Add([]byte("\xf0\x9f\x98\x80x"), 3)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 {
			n = -n
		}
		c := cutUTF8(b, n)
		if len(c) > n || !bytes.HasPrefix(b, c) {
			t.Fatalf("cut %q at %d = %q", b, n, c)
		}
		if utf8.Valid(b) && !utf8.Valid(c) {
			t.Fatalf("split a rune: %q", c)
		}
		if len(b) > n && n-len(c) >= utf8.UTFMax {
			t.Fatalf("cut %d bytes short of %d", n-len(c), n)
		}
	})
}

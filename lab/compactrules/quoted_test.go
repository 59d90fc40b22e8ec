package compactrules

import (
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
)

func TestDigest(t *testing.T) {
	text := "alpha\nbeta fooBar1 x\ngamma\ndelta\nepsilon\nzeta\neta\ntheta baz_qux\niota"
	for _, tc := range []struct {
		name   string
		quoted []int
		ctx    int
		want   string
	}{
		{"nothing quoted", nil, 3, ""},
		{"a line past the text", []int{40}, 3, ""},
		{"one line, no context", []int{1}, 0, "[lines 2-2]\nbeta fooBar1 x\n"},
		{"one line, context clipped at the start", []int{1}, 1, "[lines 1-3]\nalpha\nbeta fooBar1 x\ngamma\n"},
		{"two blocks with a gap", []int{1, 7}, 1, "[lines 1-3]\nalpha\nbeta fooBar1 x\ngamma\n…\n[lines 7-9]\neta\ntheta baz_qux\niota\n"},
		{"overlapping context merges", []int{1, 7}, 3, "[lines 1-9]\n" + text + "\n"},
		{"negative context is none", []int{7}, -2, "[lines 8-8]\ntheta baz_qux\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := digest(text, tc.quoted, tc.ctx); got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestKeepQuotedText(t *testing.T) {
	res := harness.TextResult("a\nb\nc quoted_1\nd\ne\nf\ng\n")
	for _, tc := range []struct {
		name   string
		quoted []int
		want   string
	}{
		{"nothing quoted: the default placeholder", nil, ""},
		{"the quoted line and its context", []int{2}, "[cleared to save context: the result of x (call c1, 9 bytes); below are the lines of it you quoted, with 1 lines of context. To see all of it, call recall.]\n[lines 2-4]\nb\nc quoted_1\nd\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			take, text := KeepQuoted(1).Clear(policy.ClearCandidate{Result: res, About: "the result of x (call c1, 9 bytes)", Back: "call recall",
				Quoted: func() []int { return tc.quoted }})
			if !take || text != tc.want {
				t.Fatalf("took %v, text %q; want true, %q", take, text, tc.want)
			}
		})
	}
}

// FuzzDigest checks the digest: "" exactly when no listed line is a line
// of the text; otherwise every listed line is kept, every kept line is a
// line of the text, in order.
func FuzzDigest(f *testing.F) {
	f.Add("a\nfoo_bar1 x\nb\n", 1, 1)
	f.Add("no newline at all fooBar22", 0, 3)
	f.Add("\n\n\nx_y_z12\n\n", 3, 0)
	f.Add("日本語 ident_9x\n\xff\xfe\n", 0, 2)
	f.Add("", 0, -1)
	f.Fuzz(func(t *testing.T, text string, line, ctx int) {
		ctx %= 8
		out := digest(text, []int{line}, ctx)
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		inText := line >= 0 && line < len(lines) && text != ""
		if inText != (out != "") {
			t.Fatalf("line %d of %d, digest %q", line, len(lines), out)
		}
		if inText && !strings.Contains(out, strings.TrimSuffix(lines[line], "\n")) {
			t.Fatalf("listed line %q not kept in %q", lines[line], out)
		}
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

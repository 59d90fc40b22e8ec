package tokens

import (
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// oracleSplit splits s with regexp2 interpreting o200kPattern (Compile,
// unlike MustCompile, never picks the codec's generated matcher).
func oracleSplit(t testing.TB, s string) []string {
	t.Helper()
	re, err := oracle()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var oracle = sync.OnceValues(func() (*regexp2.Regexp, error) { return regexp2.Compile(o200kPattern, regexp2.None) })

func split(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		end := pieceEnd(s, i)
		out = append(out, s[i:end])
		i = end
	}
	return out
}

func sameSplit(t *testing.T, s string) {
	t.Helper()
	got, want := split(s), oracleSplit(t, s)
	if strings.Join(want, "") != s {
		t.Skipf("the pattern does not cover %q", s) // never seen: every character matches some alternative
	}
	if len(got) != len(want) {
		t.Fatalf("%q: split %q, regexp2 %q", s, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%q: piece %d %q, regexp2 %q (all: %q / %q)", s, i, got[i], want[i], got, want)
		}
	}
}

// Each alternative of the pattern, its backtracking and its character
// classes, split as regexp2 splits them.
func TestSplitMatchesRegexp(t *testing.T) {
	for _, s := range []string{
		"hello world", "Hello, World!", "HELLOworld", "HTTPServer", "don't I'LL we'Re THEY'VE it'S", "'s's",
		"x'", "x'r", "ab'LLc", "naïve café", "e\u0301e\u0301", "\u0301", " \u0301x", "ǅungla", "ǅ", "Aǅb",
		"ʰʰʰ", "Aʰ", "AʰB", "日本語のテキストです", "한국어", "a\u0300\u0300B", "ABC\u0300DEF",
		"12345678901", "x1y22z333", "²³¹", "Ⅻ", "٣٤٥",
		"  leading spaces\n\n\ttabs", "a  b", "a \tb", "a\t(", "  \n  \n  ", "\r\n\r\n", " \r \r ", "x \n",
		"\u0085x\u00a0y\u3000", "\u2028\u2029", "   ", "\t", "\n", " ", "a ",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n", `{"path":"/etc/hosts","n":12345}`, "// comment\r\n//",
		"!!!\n/", "a/b//c", " ?!", " ", "  !", "$hello", "(Hello)", "\x7f", "a\x7f", "\x7f.get", "\x7f's",
		"<|endoftext|>", "ſ's 'ſ 'S 'K 'K", "\U0001F600\U0001F600 x", "\uFFFD\uFFFD",
	} {
		t.Run("", func(t *testing.T) { sameSplit(t, s) })
	}
}

func FuzzO200kSplit(f *testing.F) {
	for _, s := range []string{"hello world", "  \n  \n  ", "don't", "ABCdef", "e\u0301", "x1y22z333", "a\t(", "!!\n/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 2048 {
			return
		}
		sameSplit(t, s)
	})
}

// The scan and the heap merge give the same count on every piece, and
// each the codec's count of a piece it keeps whole.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"hello", "aaaaaaaaaaaaaaaa", "Supercalifragilisticexpialidocious", "日本語", "\xff\xfe", "!!!!!!!!"} {
		f.Add(s)
	}
	c := mustO200k(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > shortPiece || len(s) < 2 {
			return
		}
		if a, b := c.ranks.countShort(s), c.ranks.countLong(s); a != b {
			t.Fatalf("%q: scan %d, heap %d", s, a, b)
		}
	})
}

// Count, splitting by hand, equals the codec's count of the whole text
// wherever the codec's generated splitter agrees with the pattern.
func TestCountMatchesCodec(t *testing.T) {
	c := mustO200k(t)
	src, err := os.ReadFile("testdata/prose.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, s := range []string{text, strings.Repeat("a", 1000), strings.Repeat("ab1 ", 5000), strings.Repeat("=", 300) + "x",
		strings.Repeat("Supercalifragilistic", 50), "日本語のテキストです"} {
		if got, want := c.countSplit(s), c.countChunk(s); got != want {
			t.Errorf("%.40q: %d tokens, the codec %d", s, got, want)
		}
	}
}

// FuzzCountMatchesCodec holds the merge to the codec's: each piece of the
// split, counted alone, has the codec's count of it. (Whole texts may
// differ where the codec's generated splitter leaves the pattern: it cuts
// "  \n  \n" after each line break.)
func FuzzCountMatchesCodec(f *testing.F) {
	for _, s := range []string{"hello world", "  \n  \n  ", "don't", "ABCdef", "e\u0301", "x1y22z333", "a\t(", "!!\n/x"} {
		f.Add(s)
	}
	c := mustO200k(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 2048 {
			return
		}
		for _, p := range split(s) {
			if codecCutsRun(p) {
				continue
			}
			if got, want := c.ranks.count(p), c.countChunk(p); got != want {
				t.Fatalf("%q: %d tokens, the codec %d", p, got, want)
			}
		}
	})
}

// codecCutsRun reports whether p is a whitespace run where a line break
// is followed by other whitespace, which the codec's splitter cuts there.
func codecCutsRun(p string) bool {
	return strings.TrimSpace(p) == "" && strings.ContainsAny(strings.TrimRight(p, "\r\n"), "\r\n")
}

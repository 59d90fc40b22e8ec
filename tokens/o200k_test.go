package tokens

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

func mustO200k(t testing.TB) *bpe {
	t.Helper()
	c, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	return c.(*bpe)
}

// The expected counts were computed independently with the gpt-tokenizer
// JavaScript package's o200k_base encoding (special tokens treated as
// text).
func TestO200kKnownCounts(t *testing.T) {
	c := mustO200k(t)
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		{"The quick brown fox jumps over the lazy dog.", 10},
		{"  leading spaces\n\n\ttabs", 6},
		{"func main() {\n\tfmt.Println(\"hi\")\n}", 10},
		{"日本語のテキストです", 7},
		{`{"path":"/etc/hosts","n":12345}`, 13},
		{"<|endoftext|>", 7},
		{strings.Repeat("a", 1000), 125},
		{"12345678901", 4},
	} {
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("Count(%.40q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if c.name() != "o200k_base" {
		t.Errorf("Name = %q", c.name())
	}
}

// The codec's splitter drops DEL (U+007F); Count must still count it as
// tiktoken does. Expected counts from the js-tiktoken package (special
// tokens treated as text).
func TestBPECountsDEL(t *testing.T) {
	for _, enc := range []struct {
		name tokenizer.Encoding
		want []int
	}{
		{tokenizer.O200kBase, []int{1, 2, 3, 3, 7, 4, 3, 3, 6}},
		{tokenizer.Cl100kBase, []int{1, 2, 3, 3, 7, 4, 3, 3, 7}},
	} {
		c, err := newBPE(enc.name)
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range []string{"\x7f", "a\x7f", "\x7f.get", "hello\x7fworld", "x \x7f!abc\n/", "  \x7f  ", "\x7f's", "\x7f\x7f\x7f", "// \x7fcomment\x7f\r\n//"} {
			if got := c.Count(text); got != enc.want[i] {
				t.Errorf("%s: Count(%q) = %d, want %d", enc.name, text, got, enc.want[i])
			}
		}
	}
}

func TestO200kInvalidUTF8(t *testing.T) {
	c := mustO200k(t)
	// Invalid bytes are replaced, never dropped silently or fatal.
	if n := c.Count("ok \xff\xfe done"); n <= 0 || n > len("ok \xff\xfe done") {
		t.Fatalf("Count of invalid UTF-8 = %d", n)
	}
}

func TestO200kShared(t *testing.T) {
	a, _ := O200k()
	b, _ := O200k()
	if a != b {
		t.Fatal("O200k built twice")
	}
	want := make([]int, 8)
	for i := range want {
		want[i] = a.Count(strings.Repeat("The quick brown fox jumps over the lazy dog. ", i+1))
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", i+1)
			if got := a.Count(text); got != want[i] {
				t.Errorf("concurrent Count = %d, want %d", got, want[i])
			}
		}()
	}
	wg.Wait()
}

func FuzzO200kCount(f *testing.F) {
	for _, s := range []string{"", "hello world", "\xff", "  \n\n ", "日本語", strings.Repeat("ab ", 50)} {
		f.Add(s)
	}
	c := mustO200k(f)
	f.Fuzz(func(t *testing.T, s string) {
		n := c.Count(s)
		if n < 0 || (s != "" && n == 0) {
			t.Fatalf("Count(%q) = %d", s, n)
		}
		// A token covers at least one byte of the replaced input, where
		// each maximal invalid subpart becomes its own U+FFFD (as
		// tiktoken's errors="replace"), so at most 3 bytes per invalid
		// byte. (strings.ToValidUTF8 would fold a whole run of invalid
		// bytes into one U+FFFD: not the text that is counted.)
		if b := replacedBytesBound(s); n > b {
			t.Fatalf("Count(%q) = %d > %d bytes", s, n, b)
		}
	})
}

// replacedBytesBound is an upper bound on the length of s once each
// maximal invalid subpart is replaced by U+FFFD.
func replacedBytesBound(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			n += len("\uFFFD")
		} else {
			n += size
		}
		s = s[size:]
	}
	return n
}

// FuzzO200kChunking checks that cutting at every safe place gives the
// count of the whole text.
func FuzzO200kChunking(f *testing.F) {
	for _, s := range []string{
		"a\nb", "x.\n/y", "  \n  \n  ", "\r\n\r\nfoo\r\n", "!\n/a", "\r \r z", "1\n2\n3",
		"func main() {\n\tfmt.Println(\"hi\")\n}\n", "日本\n語\r\n\u0085x", "'s\n's\n", "\n\n \n\n /",
	} {
		f.Add(s)
	}
	c := mustO200k(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		whole := c.countChunk(s)
		if got := c.countChunked(s, 1); got != whole {
			t.Fatalf("%q: chunked %d, whole %d", s, got, whole)
		}
	})
}

// Text on which the codec's splitter is quadratic is counted in linear
// time, with the count of the whole (2 tokens per " \t \n", as tiktoken
// counts it too).
func TestO200kWhitespaceRunsStayLinear(t *testing.T) {
	c := mustO200k(t)
	for _, tc := range []struct {
		pattern string
		per     int
	}{{" \t \n", 2}} {
		text := strings.Repeat(tc.pattern, 64<<10)
		if got, want := c.Count(text), tc.per*(64<<10); got != want {
			t.Errorf("%q ×64Ki: %d tokens, want %d", tc.pattern, got, want)
		}
	}
	if got := c.Count(strings.Repeat("\r \r ", 16<<10)); got <= 0 {
		t.Errorf("CR run counted %d", got)
	}
}

package mcptool

import (
	"strings"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(32)
	b.Write([]byte("first line\n"))
	if b.String() != "first line" {
		t.Fatalf("%q", b.String())
	}
	b.Write([]byte("second line\nthird line\nfourth line\n"))
	s := b.String()
	if !strings.HasSuffix(s, "fourth line") || strings.Contains(s, "first") || !strings.HasPrefix(s, "(") {
		t.Fatalf("%q", s)
	}
	b.Write([]byte(strings.Repeat("z", 100)))
	if s := b.String(); !strings.HasSuffix(s, strings.Repeat("z", 32)) {
		t.Fatalf("%q", s)
	}
}

// FuzzTailBuffer: the tail never holds more than its size, and always ends
// with the end of what was written.
func FuzzTailBuffer(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("tail"), uint8(4))
	f.Add([]byte(""), []byte(strings.Repeat("x", 300)), uint8(16))
	f.Fuzz(func(t *testing.T, a, b []byte, size uint8) {
		n := int(size) + 1
		tb := newTailBuffer(n)
		tb.Write(a)
		tb.Write(b)
		all := append(append([]byte{}, a...), b...)
		if len(tb.buf) > n {
			t.Fatalf("holds %d > %d", len(tb.buf), n)
		}
		want := all[max(0, len(all)-n):]
		if string(tb.buf) != string(want) {
			t.Fatalf("buf %q, want %q", tb.buf, want)
		}
		_ = tb.String()
	})
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "C=3"}, map[string]string{"B": "x", "D": "4"})
	want := "A=1 C=3 B=x D=4"
	if strings.Join(got, " ") != want {
		t.Fatalf("%v", got)
	}
}

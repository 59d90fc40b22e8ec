package spill

import (
	"strings"
	"testing"
)

func TestSafeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"call_1", "call_1"},
		{"read_file", "read_file"},
		{"c-1.2", "c-1.2"},
	} {
		if got := safeName(tc.in, 48); got != tc.want {
			t.Errorf("safeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if safeName("a/b", 48) == safeName("a_b", 48) {
		t.Error("a/b and a_b share a name")
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"", ".", "..", "../../x", "call_1", "a/b", "\x00\xff", strings.Repeat("é", 100), "-rf", ".hidden"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := safeName(s, maxCallName)
		if n == "" || len(n) > maxCallName {
			t.Fatalf("safeName(%q) = %q: empty or too long", s, n)
		}
		if n[0] == '.' || n[0] == '-' {
			t.Fatalf("safeName(%q) = %q starts with %q", s, n, n[0])
		}
		for i := 0; i < len(n); i++ {
			c := n[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				t.Fatalf("safeName(%q) = %q holds %q", s, n, c)
			}
		}
		if strings.Contains(n, "..") {
			t.Fatalf("safeName(%q) = %q holds ..", s, n)
		}
		if n != safeName(s, maxCallName) {
			t.Fatal("not deterministic")
		}
	})
}

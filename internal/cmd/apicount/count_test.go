package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apiCeiling is the most exported identifiers the public API may have. It
// only comes down: lower it as names are unexported, towards 450.
const apiCeiling = 420

// TestAPICeiling fails when the module's public API grows above apiCeiling:
// export a name only for a real user outside the module.
func TestAPICeiling(t *testing.T) {
	pkgs, err := count("../../..")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range pkgs {
		total += p.Exported
	}
	if total > apiCeiling {
		var out bytes.Buffer
		for _, p := range pkgs {
			printCount(&out, p)
		}
		t.Fatalf("%d exported identifiers, above the ceiling of %d:\n%s", total, apiCeiling, out.String())
	}
}

// TestCount counts a made-up module: exported names at package level and
// exported methods of exported types, never tests, internal/, cmd/, lab/,
// testdata or nested modules.
func TestCount(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("a.go", `package m

const A, b = 1, 2

var (
	V  int
	v2 int
)

type T struct{ F int }
type u struct{}
type G[K any] struct{}

func F()          {}
func f()          {}
func (T) M()      {}
func (*T) m()     {}
func (u) M()      {}
func (G[K]) M()   {}
`)
	write("a_test.go", "package m\n\nfunc TestX() {}\n")
	write("sub/s.go", "package sub\n\nfunc S() {}\n")
	for _, hidden := range []string{"internal/i.go", "sub/internal/i.go", "cmd/c/c.go", "lab/l.go", "sub/testdata/t.go", "nested/n.go"} {
		write(hidden, "package x\n\nfunc X() {}\n")
	}
	write("nested/go.mod", "module example.com/n\n")

	pkgs, err := count(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, p := range pkgs {
		got[p.Dir] = p.Exported
	}
	// A, V, T, G, F, T.M, G.M in the root; S in sub.
	want := map[string]int{".": 7, "sub": 1}
	if len(got) != len(want) || got["."] != want["."] || got["sub"] != want["sub"] {
		t.Fatalf("count = %v, want %v", got, want)
	}
	var out bytes.Buffer
	if err := run(&out, root, 7); err == nil || !strings.Contains(err.Error(), "8 exported identifiers") {
		t.Fatalf("run with ceiling 7: err = %v, want above the ceiling", err)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseBlock: a profile line reads as its file, span and whether it
// ran; anything else is an error quoting the line.
func TestParseBlock(t *testing.T) {
	for _, tc := range []struct {
		line string
		want block
		err  bool
	}{
		{line: "example.com/m/p/a.go:3.14,5.2 2 1", want: block{file: "example.com/m/p/a.go", line0: 3, col0: 14, line1: 5, col1: 2, ran: true}},
		{line: "example.com/m/p/a.go:3.14,5.2 2 0", want: block{file: "example.com/m/p/a.go", line0: 3, col0: 14, line1: 5, col1: 2}},
		{line: "example.com/m/p/a.go 3.14,5.2 2 1", err: true},
		{line: "a.go:3.14,5.2 2", err: true},
		{line: "a.go:x,5.2 2 1", err: true},
		{line: "a.go:3.14,5.2 2 many", err: true},
	} {
		got, err := parseBlock(tc.line)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v (error %v)", tc.line, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.line) {
			t.Errorf("%q: the error %q does not quote the line", tc.line, err)
		}
	}
}

// FuzzParseBlock: any line parses or is an error, never a panic, and a
// parsed block's file is the text before its first colon.
func FuzzParseBlock(f *testing.F) {
	for _, s := range []string{"m/a.go:3.14,5.2 2 1", "m/a.go:1.1,1.1 0 0", "", ":", "a:1.2,3.4 5", "a:1.2,3.4 5 -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b, err := parseBlock(line)
		if err == nil && !strings.HasPrefix(line, b.file+":") {
			t.Fatalf("%q: file %q", line, b.file)
		}
	})
}

// walkSrc is a package whose path runs main → a → b, and a method by
// name, leaving c unrun; fwd only forwards to b.
const walkSrc = `package p

func main() {
	a()
	var t T
	t.m()
}

func a() { b(); fwd() }

func b() {}

func fwd() { b() }

func c() { b() }

type T struct{}

func (T) m() { b() }
`

// TestWalkOf: the stops are the functions with a block that ran, the
// returns the distinct calls between them from blocks that ran, and a
// function whose body is one call of another (fwd, m) is a forwarder.
func TestWalkOf(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "p.go"), []byte(walkSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	// One block per function body, as the coverage tool writes them.
	var blocks []block
	for i, line := range strings.Split(walkSrc, "\n") {
		if strings.HasPrefix(line, "func ") {
			ran := !strings.HasPrefix(line, "func c(")
			end := i + 1
			if strings.HasSuffix(line, "{") {
				end = i + 4 // main's body
			}
			// A block starts after its body's brace.
			blocks = append(blocks, block{file: "example.com/m/p/p.go", line0: i + 1, col0: strings.Index(line, "{") + 2, line1: end, col1: 80, ran: ran})
		}
	}
	w, err := walkOf(root, "example.com/m", blocks)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w.print(&out, true)
	got := out.String()
	// main→a, main→m, a→b, a→fwd, fwd→b, m→b; c did not run.
	if !strings.HasPrefix(got, "stops 5 in 1 files; returns 6 (0 to another file); files with one stop 0; forwarders 2\n") {
		t.Errorf("got\n%s", got)
	}
	if !strings.Contains(got, "p/p.go fwd") || strings.Contains(got, " c ") {
		t.Errorf("the forwarder or the stops are wrong:\n%s", got)
	}
}

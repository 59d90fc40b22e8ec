package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// feed runs the lines through a progress at t0 and returns what it printed
// and the summary's verdict.
func feed(lines ...string) (string, bool) {
	var out bytes.Buffer
	p := newProgress(&out, 30*time.Second, t0)
	for _, l := range lines {
		p.line([]byte(l), t0)
	}
	ok := p.summary(t0)
	return out.String(), ok
}

func TestProgressRecordedRun(t *testing.T) {
	raw, err := os.ReadFile("testdata/three-packages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out, ok := feed(strings.Split(strings.TrimSpace(string(raw)), "\n")...)
	if ok {
		t.Fatalf("a failing run passed:\n%s", out)
	}
	for _, want := range []string{
		"ok    tp/a",                      // a passing package, one line
		"1 passed, 1 skipped",             // with its counts
		"BUILD FAIL tp/c [tp/c.test]",     // the build failure
		"    c/c_test.go:3:33: undefined", // with the compiler's message
		"FAIL  tp/c",                      // and the package it broke
		"--- FAIL tp/b TestBad/sub",       // a failed subtest
		"boom in sub",                     // with its output
		"FAIL  tp/b",                      // its package
		"2 of 3 packages failed: tp/c, tp/b",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A passing test's output is not printed.
	if strings.Contains(out, "a_test.go") {
		t.Errorf("a passing test's log was printed:\n%s", out)
	}
}

func TestProgressCases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lines  []string
		ok     bool
		want   []string
		absent []string
	}{
		{"all pass", []string{
			`{"Action":"start","Package":"m/x"}`,
			`{"Action":"run","Package":"m/x","Test":"TestA"}`,
			`{"Action":"output","Package":"m/x","Test":"TestA","Output":"quiet detail\n"}`,
			`{"Action":"pass","Package":"m/x","Test":"TestA"}`,
			`{"Action":"pass","Package":"m/x","Elapsed":1.5}`,
		}, true, []string{"ok    m/x", "1.5s", "1 passed", "all 1 packages passed"}, []string{"quiet detail"}},
		{"no test files", []string{
			`{"Action":"start","Package":"m/y"}`,
			`{"Action":"output","Package":"m/y","Output":"?   \tm/y\t[no test files]\n"}`,
			`{"Action":"skip","Package":"m/y"}`,
		}, true, []string{"-     m/y", "no tests"}, nil},
		{"panic outside a test's verdict", []string{
			`{"Action":"start","Package":"m/z"}`,
			`{"Action":"run","Package":"m/z","Test":"TestHang"}`,
			`{"Action":"output","Package":"m/z","Test":"TestHang","Output":"panic: test timed out after 20m0s\n"}`,
			`{"Action":"output","Package":"m/z","Output":"FAIL\tm/z\t1200.0s\n"}`,
			`{"Action":"fail","Package":"m/z","Elapsed":1200}`,
		}, false, []string{"panic: test timed out", "FAIL  m/z", "1 of 1 packages failed: m/z"}, nil},
		{"not JSON is copied", []string{
			`go: downloading example.com/x v1.0.0`,
			`{"broken`,
		}, true, []string{"go: downloading example.com/x v1.0.0", `{"broken`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := feed(tc.lines...)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v:\n%s", ok, tc.ok, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// A silent stretch gets a line naming what runs, once per quiet period.
func TestProgressTickNamesWhatRuns(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, 30*time.Second, t0)
	p.line([]byte(`{"Time":"2026-03-01T12:00:00Z","Action":"start","Package":"m/slow"}`), t0)
	p.line([]byte(`{"Time":"2026-03-01T12:00:01Z","Action":"run","Package":"m/slow","Test":"TestFlood"}`), t0)
	p.tick(t0.Add(10 * time.Second))
	if out.Len() != 0 {
		t.Fatalf("spoke before the quiet period: %q", out.String())
	}
	p.tick(t0.Add(45 * time.Second))
	if got := out.String(); !strings.Contains(got, "running: m/slow (45s, 0 passed, TestFlood for 44s)") {
		t.Fatalf("%q", got)
	}
	out.Reset()
	p.tick(t0.Add(50 * time.Second))
	if out.Len() != 0 {
		t.Fatalf("spoke twice in one quiet period: %q", out.String())
	}
}

func TestRunReadsToEnd(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader(`{"Action":"pass","Package":"m/x","Elapsed":0.1}` + "\n" + `{"Action":"fail","Package":"m/w","Elapsed":0.1}`)
	if run(in, &out, time.Minute, time.Hour) {
		t.Fatalf("a failed package passed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "ok    m/x") || !strings.Contains(out.String(), "FAIL  m/w") {
		t.Fatalf("%s", out.String())
	}
}

// FuzzProgressLine: any input line is printed or counted, never a panic,
// and a summary always follows.
func FuzzProgressLine(f *testing.F) {
	raw, err := os.ReadFile("testdata/three-packages.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		f.Add(l)
	}
	f.Add(`{"Action":"fail","Package":"","Test":"x"}`)
	f.Add(`{"Action":"build-fail","ImportPath":""}`)
	f.Fuzz(func(t *testing.T, line string) {
		var out bytes.Buffer
		p := newProgress(&out, time.Second, t0)
		p.line([]byte(line), t0)
		p.tick(t0.Add(time.Minute))
		p.summary(t0)
		if !strings.Contains(out.String(), "packages") {
			t.Fatalf("no summary: %q", out.String())
		}
	})
}

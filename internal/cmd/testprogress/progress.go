package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), including the
// build events go test emits for packages that do not compile.
type event struct {
	Time       time.Time `json:"Time"`
	Action     string    `json:"Action"`
	Package    string    `json:"Package"`
	ImportPath string    `json:"ImportPath"`
	Test       string    `json:"Test"`
	Output     string    `json:"Output"`
	Elapsed    float64   `json:"Elapsed"`
	// FailedBuild names the build that failed when a package fails
	// because it did not compile.
	FailedBuild string `json:"FailedBuild"`
}

// pkgState is what is known of one package while its tests run.
type pkgState struct {
	started time.Time
	passed  int
	failed  int
	skipped int
	// output holds each running test's output ("" for the package's own),
	// printed only if it fails.
	output map[string]*strings.Builder
	// running holds the tests that started and have not finished, with
	// when they started.
	running map[string]time.Time
}

// progress turns a test2json stream into one line per finished package, the
// whole output of every failure, a line naming what still runs when nothing
// was printed for a while, and a summary. It is driven by calls, not a
// clock, so its tests feed it times.
type progress struct {
	out      io.Writer
	quiet    time.Duration // print a "still running" line after this long without a line
	pkgs     map[string]*pkgState
	builds   map[string]*strings.Builder // build output per import path
	failed   []string
	finished int
	lastLine time.Time
}

func newProgress(out io.Writer, quiet time.Duration, now time.Time) *progress {
	return &progress{out: out, quiet: quiet, pkgs: map[string]*pkgState{}, builds: map[string]*strings.Builder{}, lastLine: now}
}

func (p *progress) printf(now time.Time, format string, args ...any) {
	fmt.Fprintf(p.out, format, args...)
	p.lastLine = now
}

// line handles one line of input: a JSON event, or anything else (go's own
// messages, a vet error), which is printed as it came.
func (p *progress) line(raw []byte, now time.Time) {
	var e event
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil || e.Action == "" {
		p.printf(now, "%s\n", raw)
		return
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	p.event(e, now)
}

func (p *progress) pkg(name string, at time.Time) *pkgState {
	s := p.pkgs[name]
	if s == nil {
		s = &pkgState{started: at, output: map[string]*strings.Builder{}, running: map[string]time.Time{}}
		p.pkgs[name] = s
	}
	return s
}

func (p *progress) event(e event, now time.Time) {
	switch e.Action {
	case "build-output":
		b := p.builds[e.ImportPath]
		if b == nil {
			b = &strings.Builder{}
			p.builds[e.ImportPath] = b
		}
		b.WriteString(e.Output)
		return
	case "build-fail":
		// The packages that needed the build fail next, each naming it.
		p.printf(now, "BUILD FAIL %s\n%s", e.ImportPath, indent(p.builds[e.ImportPath]))
		delete(p.builds, e.ImportPath)
		return
	}
	if e.Package == "" {
		return
	}
	s := p.pkg(e.Package, e.Time)
	switch e.Action {
	case "start":
		s.started = e.Time
	case "run":
		if e.Test != "" {
			s.running[e.Test] = e.Time
		}
	case "output":
		b := s.output[e.Test]
		if b == nil {
			b = &strings.Builder{}
			s.output[e.Test] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		if e.Test != "" {
			p.testDone(s, e, now)
			return
		}
		p.packageDone(s, e, now)
	}
}

// testDone records a finished test; a failed one prints its output at once.
func (p *progress) testDone(s *pkgState, e event, now time.Time) {
	delete(s.running, e.Test)
	out := s.output[e.Test]
	delete(s.output, e.Test)
	switch e.Action {
	case "pass":
		s.passed++
	case "skip":
		s.skipped++
	case "fail":
		s.failed++
		p.printf(now, "--- FAIL %s %s (%.1fs)\n%s", e.Package, e.Test, e.Elapsed, indent(out))
	}
}

// packageDone prints the package's line. A package that failed with no
// failed test (a panic, a timeout, TestMain) prints its own output.
func (p *progress) packageDone(s *pkgState, e event, now time.Time) {
	p.finished++
	counts := fmt.Sprintf("%d passed", s.passed)
	if s.skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", s.skipped)
	}
	switch e.Action {
	case "pass":
		p.printf(now, "ok    %-55s %6.1fs  %s\n", e.Package, e.Elapsed, counts)
	case "skip":
		p.printf(now, "-     %-55s         no tests\n", e.Package)
	case "fail":
		p.failed = append(p.failed, e.Package)
		if e.FailedBuild != "" {
			p.printf(now, "FAIL  %-55s         build failed: %s\n", e.Package, e.FailedBuild)
			break
		}
		var rest strings.Builder
		for _, name := range slices.Sorted(maps.Keys(s.output)) {
			rest.WriteString(s.output[name].String())
		}
		if s.failed == 0 || len(s.running) > 0 {
			p.printf(now, "%s", indent(&rest))
		}
		p.printf(now, "FAIL  %-55s %6.1fs  %s, %d failed\n", e.Package, e.Elapsed, counts, s.failed)
	}
	delete(p.pkgs, e.Package)
}

// tick prints what is still running when nothing was printed for quiet:
// each package with its longest-running test.
func (p *progress) tick(now time.Time) {
	if now.Sub(p.lastLine) < p.quiet || len(p.pkgs) == 0 {
		return
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(p.pkgs)) {
		s := p.pkgs[name]
		part := fmt.Sprintf("%s (%s, %d passed", name, now.Sub(s.started).Round(time.Second), s.passed)
		if test, since, ok := oldest(s.running); ok {
			part += fmt.Sprintf(", %s for %s", test, now.Sub(since).Round(time.Second))
		}
		parts = append(parts, part+")")
	}
	p.printf(now, "...   running: %s\n", strings.Join(parts, "; "))
}

// summary prints the closing line and reports whether everything passed.
func (p *progress) summary(now time.Time) bool {
	if len(p.failed) == 0 {
		p.printf(now, "all %d packages passed\n", p.finished)
		return true
	}
	p.printf(now, "%d of %d packages failed: %s\n", len(p.failed), p.finished, strings.Join(p.failed, ", "))
	return false
}

func oldest(running map[string]time.Time) (string, time.Time, bool) {
	var name string
	var at time.Time
	for _, n := range slices.Sorted(maps.Keys(running)) {
		if name == "" || running[n].Before(at) {
			name, at = n, running[n]
		}
	}
	return name, at, name != ""
}

// indent returns b's text with every line indented, so a failure's output
// stands apart from the package lines.
func indent(b *strings.Builder) string {
	if b == nil || b.Len() == 0 {
		return ""
	}
	lines := strings.SplitAfter(strings.TrimRight(b.String(), "\n"), "\n")
	var out strings.Builder
	for _, l := range lines {
		out.WriteString("    ")
		out.WriteString(strings.TrimRight(l, "\n"))
		out.WriteByte('\n')
	}
	return out.String()
}

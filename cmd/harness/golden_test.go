package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// TestBenchGolden pins the figures of `harness bench --json` on the
// built-in suite under every preset (and the floor bound): a change to a
// guard, a policy or the engine that moves any figure fails here, and the
// golden is rewritten only on purpose, with -update.
func TestBenchGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the whole suite under every preset")
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bench-suite.json", []string{"bench", "--suite", "--json"}},
		{"bench-suite-floor.json", []string{"bench", "--suite", "--json", "--presets", "floor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := inproc(t, tc.args...)
			if code != 0 {
				t.Fatalf("harness %s: exit %d: %s", strings.Join(tc.args, " "), code, errOut)
			}
			path := filepath.Join("testdata", tc.name)
			if *update {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/harness -run TestBenchGolden -update to create it)", err)
			}
			if out != string(want) {
				t.Errorf("harness %s differs from %s:\n%s", strings.Join(tc.args, " "), path, firstDiff(string(want), out))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts, with its number.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl
		}
	}
	return "(same lines, different bytes)"
}

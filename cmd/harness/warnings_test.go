package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/replay"
)

// TestImportWarningsOnStderr runs bench, replay and audit on the shipped
// v3 store (written before request recording): each prints the importer's
// warning on standard error, once, and still prints its figures; audit
// --json carries the warning with the conversation's audit.
func TestImportWarningsOnStderr(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "store", "sqlite", "testdata", "v3.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "v3.db")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	warning := "warning: " + db + "#c_v3: " + replay.PredatesRequests + "\n"
	for _, tc := range []struct {
		args    []string
		figures string
	}{
		{[]string{"bench", db, "--presets", "harness,codex"}, "none"},
		{[]string{"replay", db, "--policy", "harness"}, "c_v3 under harness: 3 model calls"},
		{[]string{"audit", db, "--presets", "harness"}, "c_v3"},
	} {
		stdout, stderr, code := cli(t, "", tc.args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.args[0], code, stderr)
			continue
		}
		if strings.Count(stderr, warning) != 1 {
			t.Errorf("%s: stderr lacks the warning %q once:\n%s", tc.args[0], warning, stderr)
		}
		if !strings.Contains(stdout, tc.figures) || !strings.Contains(stdout, "3") {
			t.Errorf("%s: no figures on stdout:\n%s", tc.args[0], stdout)
		}
		if strings.Contains(stdout, "warning:") {
			t.Errorf("%s: the warning went to stdout:\n%s", tc.args[0], stdout)
		}
	}

	stdout, stderr, code := cli(t, "", "audit", db, "--presets", "harness", "--json")
	if code != 0 || !strings.Contains(stderr, warning) {
		t.Fatalf("audit --json: exit %d, stderr %s", code, stderr)
	}
	var report struct {
		Recordings []struct {
			Recording string          `json:"recording"`
			Calls     int             `json:"calls"`
			Costs     json.RawMessage `json:"costs"`
			Warnings  []string        `json:"warnings"`
		} `json:"recordings"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("audit --json: %v\n%s", err, stdout)
	}
	audits := report.Recordings
	if len(audits) != 1 || audits[0].Recording != "c_v3" || audits[0].Calls != 3 || len(audits[0].Costs) < 10 ||
		len(audits[0].Warnings) != 1 || audits[0].Warnings[0] != replay.PredatesRequests {
		t.Errorf("audit --json: %+v", audits)
	}
}

// TestNoWarningsForExactRecordings: a trajectory file has no importer
// warnings, and audit --json leaves the field out.
func TestNoWarningsForExactRecordings(t *testing.T) {
	stdout, stderr, code := inproc(t, "audit", fixture, "--presets", "harness", "--json")
	if code != 0 || strings.Contains(stderr, "warning:") || strings.Contains(stdout, `"warnings"`) {
		t.Errorf("audit --json of a trajectory: exit %d, stderr %s, warnings in stdout: %v", code, stderr, strings.Contains(stdout, `"warnings"`))
	}
}

// TestNotRecordedWarningNamesFlags: the warning about what a format does
// not record names the flags of the commands that read it, not a Go
// name followed by a flag of no command ("harness --system-file").
func TestNotRecordedWarningNamesFlags(t *testing.T) {
	recs, err := filepath.Glob(filepath.Join("..", "..", "bench", "data", "codex", "*", "rollout-*.jsonl"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("no shipped Codex rollout: %v", err)
	}
	for _, args := range [][]string{{"replay", recs[0]}, {"audit", "--presets", "harness", recs[0]}, {"bench", "--presets", "harness", recs[0]}} {
		_, stderr, code := inproc(t, args...)
		if code != 0 {
			t.Fatalf("harness %s: exit %d: %s", args[0], code, stderr)
		}
		if !strings.Contains(stderr, "supply them (harness audit, bench and replay: --system-file, --tools-file or --assume-system-tokens N; in Go, replay.Supply)") ||
			strings.Contains(stderr, "harness --system-file") {
			t.Errorf("harness %s: the warning does not name the commands' flags:\n%s", args[0], stderr)
		}
	}
}

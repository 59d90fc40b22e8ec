package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/harnessdir"
	"github.com/agentharness/harness/spill"
)

// spillFile saves text as the spill file of call in conversation conv of
// workspace ws, last modified age ago, and returns its locator.
func spillFile(t *testing.T, ws, conv, call, text string, age time.Duration) string {
	t.Helper()
	saved, err := (&spill.Dir{Workspace: ws}).Save(context.Background(), spill.Entry{Conversation: conv, CallID: call, Tool: "shell"}, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-age)
	if err := os.Chtimes(filepath.Join(ws, saved.Locator), then, then); err != nil {
		t.Fatal(err)
	}
	return saved.Locator
}

// spillGC runs "harness spill gc --older-than 7d --json" on ws and
// returns its report.
func spillGC(t *testing.T, ws string) harnessdir.GCReport {
	t.Helper()
	stdout, stderr, code := inproc(t, "spill", "gc", "--older-than", "7d", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep harnessdir.GCReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return rep
}

// tenDays is older than the 7d spillGC collects.
const tenDays = 10 * 24 * time.Hour

func TestSpillGC(t *testing.T) {
	ws := t.TempDir()
	spillFile(t, ws, "c_old", "call_1", "old output", tenDays)
	fresh := spillFile(t, ws, "c_new", "call_1", "new", 0)
	if rep := spillGC(t, ws); rep.Files != 1 || rep.Bytes != 10 || rep.Folders != 1 || rep.Kept != 1 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(ws, fresh)); err != nil {
		t.Fatal("fresh spill removed")
	}
	stdout, _, code := inproc(t, "spill", "gc", "--older-than=1h", "--workspace", ws)
	if code != 0 || !strings.Contains(stdout, "removed 0 spill file(s)") || !strings.Contains(stdout, "kept 1") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
}

func TestSpillGCUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"spill"},
		{"spill", "gc"},
		{"spill", "gc", "--older-than", "soon"},
		{"spill", "gc", "--older-than", "-1h"},
		{"spill", "prune"},
	} {
		if _, stderr, code := inproc(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "0": 0, "90m": 90 * time.Minute,
	} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "xd", "-2d", "7days", "1d-1h"} {
		if _, err := parseAge(bad); err == nil {
			t.Errorf("parseAge(%q) accepted", bad)
		}
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingPathNamed: a history path that does not exist gets one line
// naming it, from each command that reads histories, without the
// packages' prefixes ("bench: replay: stat …").
func TestMissingPathNamed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-sessions")
	for _, args := range [][]string{
		{"audit", missing},
		{"audit", t.TempDir(), missing},
		{"bench", missing},
		{"bench", "--presets", "harness", missing},
		{"replay", missing},
	} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			stdout, stderr, code := inproc(t, args...)
			want := "harness " + args[0] + ": " + missing + ": no such file or folder\n"
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
			}
		})
	}
}

// TestNoStoreSaysWhatCreatesIt: reading a store that is not there names
// where it was looked for, what creates it (the proxy and the launchers,
// not only harness run) and how to name another.
func TestNoStoreSaysWhatCreatesIt(t *testing.T) {
	ws := t.TempDir()
	for _, args := range [][]string{
		{"log", "list", "--workspace", ws},
		{"log", "show", "px-1", "--workspace", ws},
		{"savings", "--workspace", ws},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, stderr, code := inproc(t, args...)
			for _, want := range []string{"no transcript store at " + filepath.Join(ws, ".harness", "harness.db"), "harness proxy, harness claude", "--workspace DIR or --db FILE"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			if code != 1 || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "stat ") {
				t.Errorf("exit %d, stderr %q: want exit 1 and one line without the stat error", code, stderr)
			}
		})
	}
}

// TestAuditHTMLFolderCheckedFirst: --html naming a folder that does not
// exist fails before the audit runs (which may take minutes), in one line.
func TestAuditHTMLFolderCheckedFirst(t *testing.T) {
	recs, err := filepath.Glob(filepath.Join("..", "..", "bench", "data", "codex", "*", "rollout-*.jsonl"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("no shipped Codex rollout: %v", err)
	}
	page := filepath.Join(t.TempDir(), "no-such-folder", "audit.html")
	stdout, stderr, code := inproc(t, "audit", "--html", page, recs[0])
	want := "harness audit: --html " + page + ": no folder " + filepath.Dir(page) + " to write it in\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and only %q", code, stdout, stderr, want)
	}
}

// TestUnknownConversationSaysWhereIdsAre: log show and log delete of an
// id the store does not hold name the store and where the ids are listed.
func TestUnknownConversationSaysWhereIdsAre(t *testing.T) {
	ws := t.TempDir()
	script := writeScript(t, `{"steps":[{"text":"hello"}]}`)
	if _, stderr, code := inproc(t, "run", "--model", "scripted:"+script, "--workspace", ws, "hi"); code != 0 {
		t.Fatalf("harness run: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"log", "show", "px-nope", "--workspace", ws}, {"log", "delete", "px-nope", "--workspace", ws}} {
		_, stderr, code := inproc(t, args...)
		want := "harness log: no conversation px-nope in " + filepath.Join(ws, ".harness", "harness.db") + " (harness log list lists them; --workspace DIR or --db FILE reads another store)\n"
		if code != 1 || stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", args[:2], code, stderr, want)
		}
	}
}

package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeCodeResumedCountedOnce: a resumed Claude Code session repeats
// its parent's entries under the same uuids (testdata/claude-code/resumed:
// two real dumps of one templar session, the second resumed). Each file
// alone holds every call it shows; loaded together, as a folder or as two
// paths, the repeated entries are imported once, with a warning.
func TestClaudeCodeResumedCountedOnce(t *testing.T) {
	dir := filepath.Join("testdata", "claude-code", "resumed")
	parent, resumed := filepath.Join(dir, "parent.json"), filepath.Join(dir, "resumed.json")
	alone := map[string]int{}
	for _, p := range []string{parent, resumed} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := parseClaudeCodeAll(p, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			alone[p] += r.Calls()
		}
	}
	if alone[parent] != 4 || alone[resumed] != 5 {
		t.Fatalf("calls per file alone: %v; want 4 and 5 (3 of them shared)", alone)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		first string
	}{
		{"folder", []string{dir}, parent},
		{"parent first", []string{parent, resumed}, parent},
		{"resumed first", []string{resumed, parent}, resumed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, skipped, err := Load(tc.paths...)
			if err != nil || len(skipped) != 0 {
				t.Fatalf("Load: %v, skipped %v", err, skipped)
			}
			calls, warned := 0, 0
			for _, r := range recs {
				calls += r.Calls()
				for _, w := range r.Warnings {
					if strings.Contains(w, "entries repeat an earlier file's (same uuids") {
						warned++
						if r.Source == tc.first {
							t.Errorf("the first file read (%s) was warned: %s", r.Source, w)
						}
					}
				}
			}
			if calls != 6 {
				t.Errorf("%d calls imported, want 6 (4 + the 2 the resumed session added)", calls)
			}
			if warned != 1 {
				t.Errorf("%d warnings of repeated entries, want 1", warned)
			}
		})
	}
	// A file all of whose entries an earlier one held is skipped, saying why.
	recs, skipped, err := Load(parent, parent)
	if err != nil || len(recs) == 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "a resumed or copied session") {
		t.Errorf("the same file twice: %d recordings, skipped %v (%v)", len(recs), skipped, err)
	}
}

package replay

import (
	"testing"
	"time"
)

// TestImportedTimes: Claude Code and Codex record when each response was
// written, and the importers keep it on the call; SWE-agent does not.
func TestImportedTimes(t *testing.T) {
	for _, tc := range []struct {
		file  string
		first string // the first call's time, RFC 3339; "" for none
	}{
		{"testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl", "2025-12-17T01:50:32.471Z"},
		{"testdata/codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", "any"},
		{"testdata/pydicom-trimmed.traj.json", ""},
	} {
		rec, err := ParseFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		var prev time.Time
		n := 0
		for _, turn := range rec.Turns {
			for _, c := range turn.Calls {
				if tc.first == "" {
					if !c.Time.IsZero() {
						t.Errorf("%s: call %d has time %s, the format records none", tc.file, n, c.Time)
					}
					continue
				}
				if c.Time.IsZero() || c.Time.Before(prev) {
					t.Errorf("%s: call %d at %s, after %s", tc.file, n, c.Time, prev)
				}
				if n == 0 && tc.first != "any" && !c.Time.Equal(parseStamp(tc.first)) {
					t.Errorf("%s: first call at %s, want %s", tc.file, c.Time, tc.first)
				}
				prev = c.Time
				n++
			}
		}
	}
}

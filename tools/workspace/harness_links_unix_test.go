//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHardLinkExemptionIsTheRootsOwnHarness: a file with several hard
// links is read inside the root's own .harness/ folder and nowhere else:
// not in a folder named .harness deeper in the tree, nor in one whose name
// differs only in letter case (a different folder on a case-sensitive
// file system), nor in a folder renamed to .harness after the workspace
// opened.
func TestHardLinkExemptionIsTheRootsOwnHarness(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(secret, []byte("root:SECRET:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, dir := newTestWorkspace(t, nil, map[string]string{".harness/spill/": "", "deep/x/.harness/": "", "deep/.HaRnEsS/": "", "later/": ""})
	for _, tc := range []struct {
		path    string
		allowed bool
	}{
		{".harness/h", true},
		{".harness/spill/h", true},
		{"deep/x/.harness/h", false},
		{"deep/.HaRnEsS/h", false},
		{".HARNESS/h", false},
		{"later/h", false},
	} {
		if tc.path == ".HARNESS/h" {
			if err := os.Mkdir(filepath.Join(dir, ".HARNESS"), 0o755); err != nil {
				t.Skipf("a case-insensitive file system: %v", err)
			}
		}
		if err := os.Link(secret, filepath.Join(dir, tc.path)); err != nil {
			t.Skipf("hard links: %v", err)
		}
		t.Run(tc.path, func(t *testing.T) {
			text := run(t, w, "read_file", map[string]any{"path": tc.path}).FullText()
			_, err := w.absPath(tc.path, false)
			if tc.allowed {
				if !strings.Contains(text, "SECRET") || err != nil {
					t.Errorf("read %q, absPath %v: want the file read", text, err)
				}
				return
			}
			if strings.Contains(text, "SECRET") || !strings.Contains(text, "hard links") {
				t.Errorf("read_file: %s", text)
			}
			if !errors.Is(err, errHardLink) {
				t.Errorf("absPath: %v, want errHardLink", err)
			}
			if grep := run(t, w, "grep", map[string]any{"pattern": "SECRET", "path": filepath.Dir(tc.path)}).FullText(); strings.Contains(grep, "root:SECRET") {
				t.Errorf("grep: %s", grep)
			}
		})
	}
	// The root's .harness renamed away and another folder renamed in:
	// the workspace's own folder is the one it opened with.
	if err := os.Rename(filepath.Join(dir, ".harness"), filepath.Join(dir, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "later"), filepath.Join(dir, ".harness")); err != nil {
		t.Fatal(err)
	}
	if text := run(t, w, "read_file", map[string]any{"path": ".harness/h"}).FullText(); strings.Contains(text, "SECRET") {
		t.Errorf("a folder renamed to .harness is exempt: %s", text)
	}
}

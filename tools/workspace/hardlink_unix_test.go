//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHardLinksOutOfTheWorkspaceAreRefused: a hard link inside the root to
// a file outside it (ln /etc/passwd ws/x) is not a way out. A regular file
// with more than one link is not read (read_file, grep, edit_file) outside
// .harness/, unless Options.AllowHardLinks says the tree is made of them;
// write_file replaces the name, so the outside file is never touched.
func TestHardLinksOutOfTheWorkspaceAreRefused(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(secret, []byte("root:SECRET:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setup := func(t *testing.T, opts *Options) (*Workspace, string) {
		w, dir := newTestWorkspace(t, opts, map[string]string{"a.txt": "plain\n", ".harness/spill/": ""})
		for _, p := range []string{"x", ".harness/spill/x"} {
			if err := os.Link(secret, filepath.Join(dir, p)); err != nil {
				t.Skipf("hard links: %v", err)
			}
		}
		return w, dir
	}
	t.Run("refused", func(t *testing.T) {
		w, _ := setup(t, nil)
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": "x"}},
			{"edit_file", map[string]any{"path": "x", "old_string": "SECRET", "new_string": "open"}},
		} {
			res := run(t, w, tc.tool, tc.args)
			if text := mustFail(t, res, "hard links"); strings.Contains(text, "SECRET") {
				t.Errorf("%s leaked the content: %s", tc.tool, text)
			}
		}
		if _, err := w.absPath("x", false); !errors.Is(err, errHardLink) {
			t.Errorf("absPath: %v, want errHardLink", err)
		}
		// grep over the tree skips the linked file, and still searches the rest.
		res := run(t, w, "grep", map[string]any{"pattern": "SECRET|plain"})
		if text := res.FullText(); strings.Contains(text, "SECRET") || !strings.Contains(text, "plain") {
			t.Errorf("grep: %s", text)
		}
		// Inside .harness/ (spill files) a linked file is read.
		if text := mustOK(t, run(t, w, "read_file", map[string]any{"path": ".harness/spill/x"})); !strings.Contains(text, "SECRET") {
			t.Errorf(".harness read: %s", text)
		}
		if text := mustOK(t, run(t, w, "write_file", map[string]any{"path": "x", "content": "replaced"})); strings.Contains(text, "SECRET") {
			t.Errorf("write_file: %s", text)
		}
		if b, _ := os.ReadFile(secret); string(b) != "root:SECRET:0:0\n" {
			t.Errorf("the outside file changed: %q", b)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		w, dir := setup(t, &Options{AllowHardLinks: true})
		if text := mustOK(t, run(t, w, "read_file", map[string]any{"path": "x"})); !strings.Contains(text, "SECRET") {
			t.Errorf("read: %s", text)
		}
		// A write replaces the name; the other link keeps its content.
		mustOK(t, run(t, w, "write_file", map[string]any{"path": "x", "content": "replaced"}))
		if b, _ := os.ReadFile(secret); string(b) != "root:SECRET:0:0\n" {
			t.Errorf("the write went through the link: %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "x")); string(b) != "replaced" {
			t.Errorf("x = %q", b)
		}
	})
}

package spill

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestDirSave(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	saved, err := d.Save(context.Background(), Entry{Conversation: "c_1", CallID: "call_7", Tool: "read_file", Ext: "txt"}, strings.NewReader("hello\nworld\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := ".harness/spill/c_1/call_7-read_file.txt"; saved.Locator != want {
		t.Fatalf("locator %q, want %q", saved.Locator, want)
	}
	if saved.Bytes != 12 || saved.Hint == "" {
		t.Fatalf("saved %+v", saved)
	}
	got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(saved.Locator)))
	if err != nil || string(got) != "hello\nworld\n" {
		t.Fatalf("file %q, %v", got, err)
	}
	for p, want := range map[string]os.FileMode{
		".harness":           0o700,
		".harness/spill":     0o700,
		".harness/spill/c_1": 0o700,
		saved.Locator:        0o600,
	} {
		fi, err := os.Stat(filepath.Join(ws, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func TestDirSaveNeverOverwrites(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	e := Entry{Conversation: "c", CallID: "call_0", Tool: "shell", Ext: "json"}
	seen := map[string]bool{}
	for i := range 3 {
		s, err := d.Save(context.Background(), e, strings.NewReader(strings.Repeat("x", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if seen[s.Locator] {
			t.Fatalf("locator %s reused", s.Locator)
		}
		seen[s.Locator] = true
		if !strings.HasSuffix(s.Locator, ".json") {
			t.Fatalf("locator %s: want .json", s.Locator)
		}
	}
	if !seen[".harness/spill/c/call_0-shell-3.json"] {
		t.Fatalf("locators %v", seen)
	}
}

// A conversation's folder removed after its first spill (harness log
// delete) is made again by the next save, under the same name.
func TestDirSaveRemadeFolder(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	e := Entry{Conversation: "c", CallID: "call_0", Tool: "shell"}
	if _, err := d.Save(context.Background(), e, strings.NewReader("first")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveConversation(ws, "c"); err != nil {
		t.Fatal(err)
	}
	s, err := d.Save(context.Background(), e, strings.NewReader("second"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Locator != ".harness/spill/c/call_0-shell.txt" {
		t.Errorf("locator %s, want the first name again", s.Locator)
	}
	if got, err := os.ReadFile(filepath.Join(ws, s.Locator)); err != nil || string(got) != "second" {
		t.Errorf("file %q, %v", got, err)
	}
}

func TestDirSaveConcurrent(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	const n = 32
	locs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := d.Save(context.Background(), Entry{Conversation: "c", CallID: "same", Tool: "t"}, strings.NewReader(strings.Repeat("y", 1000)))
			if err != nil {
				t.Error(err)
				return
			}
			locs[i] = s.Locator
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, l := range locs {
		if seen[l] {
			t.Fatalf("two saves share %s", l)
		}
		seen[l] = true
	}
}

func TestDirSaveSanitisesNames(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	s, err := d.Save(context.Background(), Entry{Conversation: "../../etc", CallID: "../x", Tool: "a/b\x00c", Ext: "exe"}, strings.NewReader("z"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Locator, Folder+"/") || strings.Contains(s.Locator, "..") || !strings.HasSuffix(s.Locator, ".txt") {
		t.Fatalf("locator %q escapes or keeps a foreign extension", s.Locator)
	}
	if _, err := os.Stat(filepath.Join(ws, filepath.FromSlash(s.Locator))); err != nil {
		t.Fatal(err)
	}
}

func TestDirSaveRefusesSymlinkOut(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".harness")); err != nil {
		t.Fatal(err)
	}
	d := &Dir{Workspace: ws}
	if _, err := d.Save(context.Background(), Entry{Conversation: "c", CallID: "1", Tool: "t"}, strings.NewReader("secret")); err == nil {
		t.Fatal("a save followed a symbolic link out of the workspace")
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Fatalf("wrote outside the workspace: %v", entries)
	}
}

func TestDirSaveUnwritable(t *testing.T) {
	ws := t.TempDir()
	// A file where the .harness folder should be: no user, root included,
	// can create the spill folder.
	if err := os.WriteFile(filepath.Join(ws, ".harness"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&Dir{Workspace: ws}).Save(context.Background(), Entry{Conversation: "c", CallID: "1", Tool: "t"}, strings.NewReader("x"))
	if err == nil {
		t.Fatal("save into an unwritable workspace succeeded")
	}
	if _, err := (&Dir{}).Save(context.Background(), Entry{}, strings.NewReader("x")); err == nil {
		t.Fatal("save without a workspace succeeded")
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'a'
	}
	r.n -= k
	return k, nil
}

func TestDirSaveLeavesNothingOnError(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	if _, err := d.Save(context.Background(), Entry{Conversation: "c", CallID: "1", Tool: "t"}, &failingReader{n: 200 << 10}); err == nil {
		t.Fatal("want the reader's error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Save(ctx, Entry{Conversation: "c", CallID: "2", Tool: "t"}, strings.NewReader("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled save: %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(ws, ".harness", "spill", "c"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("partial files left: %v", entries)
	}
}

func TestRemoveConversation(t *testing.T) {
	ws := t.TempDir()
	d := &Dir{Workspace: ws}
	for _, c := range []string{"a/b", "a_b"} {
		if _, err := d.Save(context.Background(), Entry{Conversation: c, CallID: "1", Tool: "t"}, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveConversation(ws, "a/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, Folder, conversationFolder("a/b"))); !os.IsNotExist(err) {
		t.Fatalf("folder of a/b kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, Folder, "a_b")); err != nil {
		t.Fatalf("folder of a_b removed with a/b: %v", err)
	}
	if err := RemoveConversation(ws, "never-spilled"); err != nil {
		t.Fatal(err)
	}
}

var _ io.Reader = (*failingReader)(nil)

package workspace

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// jailFixture builds a workspace beside an "outside" folder holding a
// secret, with every kind of link and special file the escape table needs.
// It returns the workspace, its root and the outside folder.
func jailFixture(t testing.TB) (*Workspace, string, string) {
	t.Helper()
	top := t.TempDir()
	root := filepath.Join(top, "ws")
	outside := filepath.Join(top, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "src"), filepath.Join(root, ".git", "hooks"),
		filepath.Join(root, ".harness", "spill", "c1"), filepath.Join(root, "sub", ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):                         "TOP-SECRET\n",
		filepath.Join(root, "src", "main.go"):                        "package main\n",
		filepath.Join(root, ".git", "config"):                        "[core]\n",
		filepath.Join(root, ".harness", "spill", "c1", "call-x.txt"): "spilled\n",
		filepath.Join(root, "readme.txt"):                            "hello\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"abs-out":      filepath.Join(outside, "secret.txt"),
		"rel-out":      "../outside/secret.txt",
		"dir-out":      outside,
		"dir-out-rel":  "../outside",
		"chain1":       "chain2",
		"chain2":       "chain3",
		"chain3":       "../outside/secret.txt",
		"loop":         "loop",
		"up":           "..",
		"devnull":      "/dev/null",
		"gitlink":      ".git",
		"in-link":      "src/main.go",
		"in-abs":       filepath.Join(root, "src", "main.go"),
		"src-link":     "src",
		"via-missing":  "missing/../../outside/secret.txt",
		"etc":          "/etc",
		"src/up-inner": "../readme.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Unix socket path must be short; listen from inside the folder.
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", "sock")
	os.Chdir(wd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	w, err := New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, root, outside
}

func TestResolveEscapesRefused(t *testing.T) {
	w, root, outside := jailFixture(t)
	cases := []struct {
		name     string
		path     string
		forWrite bool
		want     error // nil: any error will do
	}{
		{"dotdot", "../outside/secret.txt", false, errOutside},
		{"dotdot after a folder", "src/../../outside/secret.txt", false, errOutside},
		{"dotdot only", "..", false, errOutside},
		{"absolute outside", "/etc/passwd", false, errOutside},
		{"absolute sibling", filepath.Join(outside, "secret.txt"), false, errOutside},
		{"absolute prefix trick", root + "-evil/x", false, errOutside},
		{"symlink to absolute outside", "abs-out", false, errOutside},
		{"symlink to relative outside", "rel-out", false, errOutside},
		{"symlinked parent dir (absolute)", "dir-out/secret.txt", false, errOutside},
		{"symlinked parent dir (relative)", "dir-out-rel/secret.txt", false, errOutside},
		{"write through symlinked parent", "dir-out/new.txt", true, errOutside},
		{"chain of symlinks out", "chain1", false, errOutside},
		{"symlink to parent", "up/outside/secret.txt", false, errOutside},
		{"symlink to /etc", "etc/passwd", false, errOutside},
		{"symlink to a device", "devnull", false, errOutside},
		{"link through a missing dir", "via-missing", true, errOutside},
		{"symlink loop", "loop", false, nil},
		{"FIFO read", "fifo", false, errSpecialFile},
		{"FIFO write", "fifo", true, errSpecialFile},
		{"socket", "sock", false, errSpecialFile},
		{"write into .git", ".git/config", true, errProtected},
		{"write a new file in .git", ".git/hooks/pre-commit", true, errProtected},
		{"write into nested .git", "sub/.git/HEAD", true, errProtected},
		{"write into .GIT (case)", ".GIT/config", true, errProtected},
		{"write into .harness", ".harness/spill/c1/call-x.txt", true, errProtected},
		{"write via link into .git", "gitlink/config", true, errProtected},
		{"write the root", ".", true, nil},
		{"write a directory", "src", true, nil},
		{"NUL byte", "src/main.go\x00.txt", false, errInvalidPath},
		{"empty", "", false, errInvalidPath},
		{"missing file read", "nope.txt", false, fs.ErrNotExist},
	}
	if len(cases) < 15 {
		t.Fatalf("the escape table must have at least 15 cases, has %d", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := w.absPath(c.path, c.forWrite)
			if err == nil {
				t.Fatalf("absPath(%q, %v) = %q, want an error", c.path, c.forWrite, got)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("absPath(%q) error %v, want %v", c.path, err, c.want)
			}
			if strings.Contains(err.Error(), "TOP-SECRET") {
				t.Fatal("the error leaks file content")
			}
		})
	}
}

// TestEscapesRefusedByTools sends the escape table's paths through the
// tools themselves: each call must fail, and no outside content may appear.
func TestEscapesRefusedByTools(t *testing.T) {
	w, _, outside := jailFixture(t)
	reads := []string{"../outside/secret.txt", filepath.Join(outside, "secret.txt"), "abs-out", "rel-out",
		"dir-out/secret.txt", "chain1", "up/outside/secret.txt", "devnull", "fifo", "sock", "loop"}
	for _, p := range reads {
		res := run(t, w, "read_file", map[string]any{"path": p})
		text := mustFail(t, res)
		if strings.Contains(text, "TOP-SECRET") {
			t.Fatalf("read_file(%s) leaked: %s", p, text)
		}
	}
	listing := mustOK(t, run(t, w, "list_dir", map[string]any{}))
	for _, want := range []string{"abs-out -> " + filepath.Join(outside, "secret.txt") + "  (symbolic link out of the workspace; the tools will not follow it)",
		"in-link -> src/main.go  (symbolic link)\n"} {
		if !strings.Contains(listing, want) {
			t.Errorf("list_dir lacks %q:\n%s", want, listing)
		}
	}
	for _, p := range []string{"dir-out", "up", "etc"} {
		mustFail(t, run(t, w, "list_dir", map[string]any{"path": p}))
		mustFail(t, run(t, w, "grep", map[string]any{"pattern": "SECRET", "path": p}))
	}
	writes := []string{"../outside/new.txt", "dir-out/new.txt", ".git/config", ".harness/x", "gitlink/config", "sub/.git/x", filepath.Join(outside, "new.txt")}
	for _, p := range writes {
		mustFail(t, run(t, w, "write_file", map[string]any{"path": p, "content": "x"}))
		mustFail(t, run(t, w, "edit_file", map[string]any{"path": p, "old_string": "a", "new_string": "b"}))
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Fatal("a file was created outside the workspace")
	}
	// A grep over the whole workspace does not follow links out.
	res := run(t, w, "grep", map[string]any{"pattern": "TOP-SECRET"})
	if text := mustOK(t, res); strings.Contains(text, "TOP-SECRET\n") && !strings.Contains(text, "no matches") {
		t.Fatalf("grep followed a link outside: %s", text)
	}
}

func TestResolveAllowed(t *testing.T) {
	w, root, _ := jailFixture(t)
	cases := []struct {
		path     string
		forWrite bool
		want     string // relative to root
	}{
		{"src/main.go", false, "src/main.go"},
		{"./src//main.go", false, "src/main.go"},
		{"src/../readme.txt", false, "readme.txt"},
		{filepath.Join(root, "readme.txt"), false, "readme.txt"},
		{"in-link", false, "src/main.go"},
		{"in-abs", false, "src/main.go"},
		{"src-link/main.go", false, "src/main.go"},
		{"src/up-inner", false, "readme.txt"},
		{".", false, "."},
		{".harness/spill/c1/call-x.txt", false, ".harness/spill/c1/call-x.txt"},
		{".git/config", false, ".git/config"},
		{"new/deep/file.txt", true, "new/deep/file.txt"},
		{"src-link/new.go", true, "src/new.go"},
		{"in-link", true, "src/main.go"},
		{"gitignore-like.git", true, "gitignore-like.git"},
	}
	for _, c := range cases {
		got, err := w.absPath(c.path, c.forWrite)
		if err != nil {
			t.Errorf("absPath(%q, %v): %v", c.path, c.forWrite, err)
			continue
		}
		if want := filepath.Join(w.Dir(), filepath.FromSlash(c.want)); got != want {
			t.Errorf("absPath(%q) = %q, want %q", c.path, got, want)
		}
	}
}

// TestRootThroughSymlink opens a workspace whose path is itself a symbolic
// link; absolute paths spelled either way are inside.
func TestRootThroughSymlink(t *testing.T) {
	top := t.TempDir()
	real := filepath.Join(top, "real")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "a.txt"), []byte("a\n"), 0o644)
	alias := filepath.Join(top, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	w, err := New(alias, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, p := range []string{filepath.Join(alias, "a.txt"), filepath.Join(real, "a.txt")} {
		if _, err := w.absPath(p, false); err != nil {
			t.Errorf("absPath(%s): %v", p, err)
		}
	}
	if _, err := New(filepath.Join(real, "a.txt"), nil); err == nil {
		t.Error("New accepted a file as the root")
	}
	if _, err := New(filepath.Join(top, "missing"), nil); err == nil {
		t.Error("New accepted a missing root")
	}
}

func TestDeviceFileRefused(t *testing.T) {
	dir := t.TempDir()
	// Creating a device node needs privileges; a container often grants
	// them, a developer machine usually does not.
	err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, int(1<<8|3))
	if err != nil {
		t.Skipf("cannot create a device node here: %v", err)
	}
	w, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.absPath("null", false); !errors.Is(err, errSpecialFile) {
		t.Fatalf("device: got %v, want errSpecialFile", err)
	}
	mustFail(t, run(t, w, "read_file", map[string]any{"path": "null"}), "character device")
}

// FuzzResolve checks the jail's invariant on arbitrary paths: whatever
// absPath accepts lies inside the root, also after the kernel resolves
// every symbolic link; a path accepted for writing is never inside .git or
// .harness; and nothing panics.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"a", "..", "../x", "/etc/passwd", "./a/../../b", "abs-out", "rel-out", "dir-out/secret.txt",
		"chain1", "loop", "up/outside", "src-link/../..", "in-link", ".git/config", ".GiT/x", ".harness/spill/x",
		"gitlink/x", "fifo", "sock", "src/up-inner", "via-missing", "a\x00b", "", ".", "//", "src/./main.go",
		"src-link/../../outside", "up/ws/src/main.go", "etc/../etc/passwd", "new/dir/../../..",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	w, _, _ := jailFixture(f)
	f.Fuzz(func(t *testing.T, p string, forWrite bool) {
		got, err := w.absPath(p, forWrite)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(w.Dir(), got)
		if rerr != nil || escapes(rel) || filepath.IsAbs(rel) {
			t.Fatalf("absPath(%q, %v) = %q: outside the root %s", p, forWrite, got, w.Dir())
		}
		if real, err := filepath.EvalSymlinks(got); err == nil {
			if r, err := filepath.Rel(w.Dir(), real); err != nil || escapes(r) {
				t.Fatalf("absPath(%q) = %q, which the kernel resolves to %q outside the root", p, got, real)
			}
			if real != got {
				t.Fatalf("absPath(%q) = %q still has links in it (really %q)", p, got, real)
			}
		}
		if forWrite && protectedPart(rel) != "" {
			t.Fatalf("absPath(%q, write) = %q is inside a protected folder", p, got)
		}
		if fi, err := os.Lstat(got); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			t.Fatalf("absPath(%q) = %q is a %s", p, got, fileKind(fi.Mode()))
		}
	})
}

package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readBack(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFile(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, map[string]string{"old.sh": "echo old\n", "src/": ""})
	res := run(t, w, "write_file", map[string]any{"path": "new/deep/a.txt", "content": "one\ntwo"})
	if got := mustOK(t, res); got != "wrote new/deep/a.txt: 7 bytes, 2 lines (new file)" {
		t.Fatalf("got %q", got)
	}
	if res.Meta["path"] != "new/deep/a.txt" || res.Meta["created"] != true {
		t.Fatalf("meta %v", res.Meta)
	}
	if readBack(t, dir, "new/deep/a.txt") != "one\ntwo" {
		t.Fatal("content differs")
	}

	// Replacing keeps the file's permissions.
	os.Chmod(filepath.Join(dir, "old.sh"), 0o751)
	got := mustOK(t, run(t, w, "write_file", map[string]any{"path": "old.sh", "content": "echo new\n"}))
	if got != "wrote old.sh: 9 bytes, 1 line (replaced 9 bytes)" {
		t.Fatalf("got %q", got)
	}
	fi, _ := os.Stat(filepath.Join(dir, "old.sh"))
	if fi.Mode().Perm() != 0o751 || readBack(t, dir, "old.sh") != "echo new\n" {
		t.Fatalf("mode %v content %q", fi.Mode(), readBack(t, dir, "old.sh"))
	}

	mustOK(t, run(t, w, "write_file", map[string]any{"path": "empty.txt", "content": ""}))
	mustFail(t, run(t, w, "write_file", map[string]any{"path": "x.txt"}), "content is required")
	mustFail(t, run(t, w, "write_file", map[string]any{"path": "src", "content": "x"}), "is a directory")
	mustFail(t, run(t, w, "write_file", map[string]any{"path": "old.sh/x", "content": "x"}), "not a directory")

	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("left %s behind", e.Name())
		}
	}
}

// TestWriteFileHardLinkNotWrittenThrough: a hard link to a file outside the
// workspace cannot be detected as such, but the atomic rename replaces the
// link instead of writing into the shared inode.
func TestWriteFileHardLinkNotWrittenThrough(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, nil)
	outside := filepath.Join(t.TempDir(), "victim.txt")
	os.WriteFile(outside, []byte("original\n"), 0o644)
	if err := os.Link(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Skipf("hard links across these folders: %v", err)
	}
	mustOK(t, run(t, w, "write_file", map[string]any{"path": "link.txt", "content": "changed\n"}))
	mustOK(t, run(t, w, "edit_file", map[string]any{"path": "link.txt", "old_string": "changed", "new_string": "edited"}))
	if b, _ := os.ReadFile(outside); string(b) != "original\n" {
		t.Fatalf("the outside file was modified: %q", b)
	}
}

func TestWriteFileThroughInsideLink(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, map[string]string{"src/a.go": "package a\n"})
	os.Symlink("src/a.go", filepath.Join(dir, "alias.go"))
	res := run(t, w, "write_file", map[string]any{"path": "alias.go", "content": "package b\n"})
	mustOK(t, res)
	if res.Meta["path"] != "src/a.go" || readBack(t, dir, "src/a.go") != "package b\n" {
		t.Fatalf("meta %v, content %q", res.Meta, readBack(t, dir, "src/a.go"))
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "alias.go")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
}

const editSource = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("hello")
}

func greet(name string) string {
	return "hi " + name
}
`

func TestEditFile(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, map[string]string{"main.go": editSource})
	res := run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": `return "hi " + name`, "new_string": `return "hello, " + name`})
	got := mustOK(t, res)
	want := "edited main.go: replaced 1 occurrence at line 11; the file now has 12 lines.\n" +
		"     8\t}\n     9\t\n    10\tfunc greet(name string) string {\n    11\t\treturn \"hello, \" + name\n    12\t}"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if res.Meta["replacements"] != 1 || res.Meta["first_line"] != 11 {
		t.Fatalf("meta %v", res.Meta)
	}
	if !strings.Contains(readBack(t, dir, "main.go"), `return "hello, " + name`) {
		t.Fatal("not written")
	}

	// Not unique: nothing changes, the lines are listed.
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": `fmt.Println("hello")`, "new_string": "x"}),
		"occurs 2 times", "lines 6, 7", "replace_all")
	res = run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": `fmt.Println("hello")`, "new_string": `fmt.Println("bye")`, "replace_all": true})
	if got := mustOK(t, res); !strings.HasPrefix(got, "edited main.go: replaced 2 occurrences, the first at line 6;") {
		t.Fatalf("replace_all: %s", got)
	}
	if strings.Count(readBack(t, dir, "main.go"), "bye") != 2 {
		t.Fatal("replace_all did not replace both")
	}

	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": "", "new_string": "x"}), "write_file")
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": "a", "new_string": "a"}), "same as old_string")
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": "a"}), "new_string is required")
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"}), "does not exist", "write_file")
}

func TestEditFileNotFoundShowsNearest(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, map[string]string{"main.go": editSource})

	// Wrong indentation: the passage that differs only in white space.
	text := mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go",
		"old_string": "func greet(name string) string {\n    return \"hi \" + name\n}", "new_string": "x"}),
		"was not found in main.go; nothing was changed", "Lines 10-12 match except for white space")
	if !strings.Contains(text, "    11\t\treturn \"hi \" + name") {
		t.Fatalf("candidate text missing: %s", text)
	}

	// A near miss: the closest passage with its similarity.
	text = mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go",
		"old_string": "func greet(nom string) string {\n\treturn \"hey \" + nom\n}", "new_string": "x"}),
		"The closest passages:", "Lines 10-12 (")
	if !strings.Contains(text, "% similar)") {
		t.Fatalf("no similarity: %s", text)
	}

	// read_file's numbers pasted into old_string.
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": "    11\t\treturn \"hi\" + name", "new_string": "x"}),
		"line number and a tab")

	// Nothing similar at all.
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "main.go", "old_string": "zzzzqqqq", "new_string": "x"}),
		"No similar text was found")

	if readBack(t, dir, "main.go") != editSource {
		t.Fatal("a failed edit changed the file")
	}
}

func TestEditFileCRLFAndBinary(t *testing.T) {
	w, dir := newTestWorkspace(t, nil, map[string]string{
		"win.txt": "one\r\ntwo\r\nthree\r\n",
		"b.bin":   "a\x00b",
	})
	mustOK(t, run(t, w, "edit_file", map[string]any{"path": "win.txt", "old_string": "one\ntwo", "new_string": "1\n2"}))
	if got := readBack(t, dir, "win.txt"); got != "1\r\n2\r\nthree\r\n" {
		t.Fatalf("CRLF edit: %q", got)
	}
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "b.bin", "old_string": "a", "new_string": "c"}), "binary")
}

func TestEditFileTooLarge(t *testing.T) {
	w, _ := newTestWorkspace(t, &Options{MaxEditBytes: 100}, map[string]string{"big.txt": strings.Repeat("x", 101)})
	mustFail(t, run(t, w, "edit_file", map[string]any{"path": "big.txt", "old_string": "x", "new_string": "y", "replace_all": true}), "101 bytes")
}

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func searchFixture(t *testing.T) (*Workspace, string) {
	t.Helper()
	w, dir := newTestWorkspace(t, nil, map[string]string{
		"go.mod":                  "module example.com/x\n",
		"main.go":                 "package main\n\nfunc main() {\n\thandler()\n}\n",
		"cmd/tool/main.go":        "package main\n\n// TODO: flags\nfunc main() {}\n",
		"pkg/api/handler.go":      "package api\n\nfunc Handler() {}\nfunc otherHandler() {}\n",
		"pkg/api/handler_test.go": "package api\n\nfunc TestHandler(t *testing.T) {}\n",
		"web/app.ts":              "export const handler = 1;\n",
		"web/app.tsx":             "export const View = () => null; // handler\n",
		"docs/readme.md":          "# Handler docs\n",
		".git/config":             "handler in git\n",
		".harness/spill/c1/x.txt": "handler in spill\n",
		"img.bin":                 "\x00\x01handler\x00",
		"empty/":                  "",
	})
	if err := os.Symlink("pkg", filepath.Join(dir, "pkglink")); err != nil {
		t.Fatal(err)
	}
	return w, dir
}

func TestListDir(t *testing.T) {
	w, _ := searchFixture(t)
	res := run(t, w, "list_dir", map[string]any{})
	text := mustOK(t, res)
	for _, want := range []string{".git/\n", "cmd/\n", "go.mod  (21 bytes)\n", "pkglink -> pkg  (symbolic link)\n", "empty/\n",
		"[. (workspace root): 11 entries — 7 folders, 3 files, 1 other]"} {
		if !strings.Contains(text, want) {
			t.Errorf("list_dir lacks %q:\n%s", want, text)
		}
	}
	// Sorted by name.
	if strings.Index(text, "cmd/") > strings.Index(text, "go.mod") {
		t.Errorf("not sorted:\n%s", text)
	}
	text = mustOK(t, run(t, w, "list_dir", map[string]any{"path": "pkg/api"}))
	want := "handler.go  (54 bytes)\nhandler_test.go  (47 bytes)\n[pkg/api: 2 entries — 0 folders, 2 files]"
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	if text := mustOK(t, run(t, w, "list_dir", map[string]any{"path": "pkglink"})); !strings.Contains(text, "[pkg: 1 entry") {
		t.Errorf("list through an inside link: %s", text)
	}
	mustFail(t, run(t, w, "list_dir", map[string]any{"path": "main.go"}), "not a directory", "read_file")
	mustFail(t, run(t, w, "list_dir", map[string]any{"path": "nope"}), "does not exist")
}

func TestListDirLimit(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < maxListEntries+5; i++ {
		files[fmt.Sprintf("d/f%05d", i)] = ""
	}
	w, _ := newTestWorkspace(t, nil, files)
	text := mustOK(t, run(t, w, "list_dir", map[string]any{"path": "d"}))
	if !strings.Contains(text, "f00999  (0 bytes)") || strings.Contains(text, "f01000") ||
		!strings.HasSuffix(text, fmt.Sprintf("[d: %d entries — 0 folders, %d files; 5 not shown — use glob with a narrower pattern]", maxListEntries+5, maxListEntries+5)) {
		t.Fatalf("limit: %s", text[len(text)-300:])
	}
}

func TestGlob(t *testing.T) {
	w, dir := searchFixture(t)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, "main.go\n[1 match for *.go]"},
		{map[string]any{"pattern": "**/*.go"}, "cmd/tool/main.go\nmain.go\npkg/api/handler.go\npkg/api/handler_test.go\n[4 matches for **/*.go]"},
		{map[string]any{"pattern": "pkg/**/*_test.go"}, "pkg/api/handler_test.go\n[1 match for pkg/**/*_test.go]"},
		{map[string]any{"pattern": "**/*.{ts,tsx}"}, "web/app.ts\nweb/app.tsx\n[2 matches for **/*.{ts,tsx}]"},
		{map[string]any{"pattern": "*", "path": "web"}, "web/app.ts\nweb/app.tsx\n[2 matches for *]"},
		{map[string]any{"pattern": "*"}, "cmd/\ndocs/\nempty/\ngo.mod\nimg.bin\nmain.go\npkg/\npkglink\nweb/\n[9 matches for *]"},
		{map[string]any{"pattern": "**/config"}, "[no matches for **/config]"},
		{map[string]any{"pattern": ".git/*"}, ".git/config\n[1 match for .git/*]"},
		{map[string]any{"pattern": "**/*.txt", "path": ".harness"}, ".harness/spill/c1/x.txt\n[1 match for **/*.txt]"},
		{map[string]any{"pattern": filepath.Join(dir, "cmd", "*", "main.go")}, "cmd/tool/main.go\n[1 match for cmd/*/main.go]"},
		{map[string]any{"pattern": "**/*.go", "max_results": 2}, "cmd/tool/main.go\nmain.go\n[2 of 4 matches for **/*.go shown — narrow the pattern or raise max_results (at most 2000)]"},
		{map[string]any{"pattern": "nothere/*.go"}, "[no matches for nothere/*.go]"},
	}
	for _, c := range cases {
		got := mustOK(t, run(t, w, "glob", c.args))
		if got != c.want {
			t.Errorf("glob %v:\ngot  %q\nwant %q", c.args, got, c.want)
		}
	}
	mustFail(t, run(t, w, "glob", map[string]any{"pattern": "../*"}), "..")
	mustFail(t, run(t, w, "glob", map[string]any{"pattern": "/etc/*"}), "outside the workspace")
	mustFail(t, run(t, w, "glob", map[string]any{"pattern": "[a-"}), "bad pattern")
	mustFail(t, run(t, w, "glob", map[string]any{"pattern": "{a,b"}), "without '}'")
	mustFail(t, run(t, w, "glob", map[string]any{"pattern": "*", "path": "../"}), "outside the workspace")
}

func TestGlobMatcher(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "d/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "d/e/a.go", true},
		{"d/**", "d/e/f", true},
		{"d/**", "d", true},
		{"**/x/**/y", "a/x/b/c/y", true},
		{"**/x/**/y", "a/x/b/c/z", false},
		{"a?c", "abc", true},
		{"[ab]*", "bz", true},
		{"{a,b{c,d}}.txt", "bd.txt", true},
		{"{a,b{c,d}}.txt", "b.txt", false},
	}
	for _, c := range cases {
		m, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := m.match(c.name); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
	if _, err := compileGlob(strings.Repeat("**/", maxDoubleStars+1) + "x"); err == nil {
		t.Error("too many ** accepted")
	}
	if _, err := compileGlob(strings.Repeat("{a,b}", 9)); err == nil {
		t.Error("a brace bomb was accepted")
	}
}

func TestGrep(t *testing.T) {
	w, _ := searchFixture(t)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "func \\w*Handler"},
			"pkg/api/handler.go:3:func Handler() {}\npkg/api/handler.go:4:func otherHandler() {}\npkg/api/handler_test.go:3:func TestHandler(t *testing.T) {}\n[3 matching lines in 2 files; 1 binary file skipped]"},
		{map[string]any{"pattern": "handler", "glob": "*.ts"}, "web/app.ts:1:export const handler = 1;\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "handler", "glob": "web/*.tsx"}, "web/app.tsx:1:export const View = () => null; // handler\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "HANDLER", "path": "docs", "ignore_case": true}, "docs/readme.md:1:# Handler docs\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "handler", "path": ".harness"}, ".harness/spill/c1/x.txt:1:handler in spill\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "handler", "path": ".harness/spill/c1/x.txt"}, ".harness/spill/c1/x.txt:1:handler in spill\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "TODO", "path": "cmd", "context": 1},
			"cmd/tool/main.go-2-\ncmd/tool/main.go:3:// TODO: flags\ncmd/tool/main.go-4-func main() {}\n[1 matching line in 1 file]"},
		{map[string]any{"pattern": "zzz"}, "[no matches for /zzz/ in the workspace (9 files searched; 1 binary file skipped)]"},
		{map[string]any{"pattern": "Handler", "max_matches": 1, "path": "pkg"},
			"pkg/api/handler.go:3:func Handler() {}\n[1 matching line in 1 file; stopped at max_matches=1 and more matches exist — narrow pattern, path or glob]"},
	}
	for _, c := range cases {
		got := mustOK(t, run(t, w, "grep", c.args))
		if got != c.want {
			t.Errorf("grep %v:\ngot  %q\nwant %q", c.args, got, c.want)
		}
	}
	mustFail(t, run(t, w, "grep", map[string]any{"pattern": "(a"}), "not a valid RE2")
	mustFail(t, run(t, w, "grep", map[string]any{"pattern": "a", "context": 11}), "context")
	mustFail(t, run(t, w, "grep", map[string]any{"pattern": "a", "path": "nope"}), "does not exist")
}

func TestGrepContextGroups(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		if i == 5 || i == 7 || i == 20 {
			fmt.Fprintf(&b, "hit %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	w, _ := newTestWorkspace(t, nil, map[string]string{"f.txt": b.String()})
	got := mustOK(t, run(t, w, "grep", map[string]any{"pattern": "^hit", "context": 2}))
	want := "f.txt-3-line 3\nf.txt-4-line 4\nf.txt:5:hit 5\nf.txt-6-line 6\nf.txt:7:hit 7\nf.txt-8-line 8\nf.txt-9-line 9\n--\n" +
		"f.txt-18-line 18\nf.txt-19-line 19\nf.txt:20:hit 20\nf.txt-21-line 21\nf.txt-22-line 22\n[3 matching lines in 1 file]"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGrepLongLine(t *testing.T) {
	line := strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000)
	w, _ := newTestWorkspace(t, nil, map[string]string{"min.js": line + "\n"})
	got := mustOK(t, run(t, w, "grep", map[string]any{"pattern": "NEEDLE"}))
	if !strings.Contains(got, "…"+strings.Repeat("a", grepShowBytes/4)+"NEEDLE") || !strings.Contains(got, "[10006-byte line]") || len(got) > 2*grepShowBytes {
		t.Fatalf("long line shown as %q", got)
	}
}

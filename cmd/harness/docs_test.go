package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFileRE finds, in the user docs, a repository file named in code
// spans or links: a path with a folder and a file extension.
var docFileRE = regexp.MustCompile("(?:`|\\]\\()((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\\.(?:go|md|json|jsonl|toml|png|html|sh|mod|db))(?:`|\\))")

// TestDocsNameRepositoryFiles: every file the README and docs/ name by
// its path in the repository exists, so no doc points a new user at a
// file that was moved or dropped (paths in the user's own project, under
// .harness/, are not the repository's).
func TestDocsNameRepositoryFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"))
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docFileRE.FindAllStringSubmatch(string(b), -1) {
			p := m[1]
			if strings.HasPrefix(p, ".harness/") || strings.HasPrefix(p, "~/") {
				continue
			}
			// A link is relative to its doc; a code span names a path
			// from the repository's root.
			base := root
			if strings.HasPrefix(m[0], "](") {
				base = filepath.Dir(doc)
			}
			if _, err := os.Stat(filepath.Join(base, p)); err != nil {
				t.Errorf("%s names %s, which is not in the repository", filepath.Base(doc), p)
			}
		}
	}
}

// helpSectionRE finds, in a help text, a section of a repository doc it
// points at: FILE.md, "Heading".
var helpSectionRE = regexp.MustCompile(`([A-Za-z0-9_/-]+\.md),\s+"([^"]+)"`)

// TestHelpNamesDocSections: every section of a doc a command's -h points
// at (docs/design.md, "Re-reads priced") is a heading of that doc, or a
// bold item of it.
func TestHelpNamesDocSections(t *testing.T) {
	seen := 0
	for _, c := range commands() {
		if c.name == "worker" {
			continue
		}
		stdout, _, _ := inproc(t, c.name, "-h")
		for _, m := range helpSectionRE.FindAllStringSubmatch(stdout, -1) {
			seen++
			b, err := os.ReadFile(filepath.Join("..", "..", m[1]))
			if err != nil {
				t.Errorf("harness %s -h points at %s: %v", c.name, m[1], err)
				continue
			}
			heading := regexp.MustCompile(`(?m)^#+ ` + regexp.QuoteMeta(m[2]) + `\s*$|\*\*` + regexp.QuoteMeta(m[2]) + `\.?\*\*`)
			if !heading.Match(b) {
				t.Errorf("harness %s -h points at %s, %q: no such section", c.name, m[1], m[2])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no help text points at a doc's section (is the pattern still right?)")
	}
}

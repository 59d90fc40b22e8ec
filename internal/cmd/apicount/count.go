package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pkgCount is one package directory's exported identifiers, lines of
// non-test Go code and lines of tests.
type pkgCount struct {
	Dir       string
	Exported  int
	Lines     int
	TestLines int
}

// skipDirs are the top-level directories outside the public API.
var skipDirs = map[string]bool{"lab": true, "internal": true, "cmd": true, "examples": true}

// count walks the module rooted at root and counts each public package.
func count(root string) ([]pkgCount, error) {
	byDir := map[string]*pkgCount{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return skipDir(root, path, rel, d.Name())
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		p := byDir[dir]
		if p == nil {
			p = &pkgCount{Dir: dir}
			byDir[dir] = p
		}
		if strings.HasSuffix(rel, "_test.go") {
			p.TestLines += bytes.Count(src, []byte("\n"))
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		p.Exported += exported(f)
		p.Lines += bytes.Count(src, []byte("\n"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]pkgCount, 0, len(byDir))
	for _, p := range byDir {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// skipDir tells WalkDir to leave out directories outside the public API:
// lab/, cmd/, examples/, every internal/ (Go lets no other module import
// them), testdata, hidden ones and nested modules.
func skipDir(root, path, rel, name string) error {
	if rel == "." {
		return nil
	}
	if skipDirs[strings.SplitN(rel, "/", 2)[0]] || name == "internal" || name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

// exported counts one file's exported package-level names and the exported
// methods of its exported types.
func exported(f *ast.File) int {
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || receiverExported(d.Recv) {
				n++
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// fn is one function or method of the source.
type fn struct {
	pkg, file, name, recv string // file: relative to the module's root
	decl                  *ast.FuncDecl
	ran                   bool
	calls                 []*ast.CallExpr // calls in statements the path ran
	imports               map[string]string
}

func (f *fn) String() string {
	if f.recv != "" {
		return "(" + f.recv + ")." + f.name
	}
	return f.name
}

// walk is what a path ran: its stops by file and the calls between them.
type walk struct {
	stops []*fn
	calls map[[2]*fn]bool
	fwd   []*fn // stops whose body is one call of another stop
}

// walkOf reads the functions of the profile's files under root and
// returns the walk of the blocks that ran.
func walkOf(root, modPath string, blocks []block) (*walk, error) {
	byFile := map[string][]block{}
	for _, b := range blocks {
		byFile[b.file] = append(byFile[b.file], b)
	}
	fset := token.NewFileSet()
	var all []*fn
	for file, bs := range byFile {
		if path.Dir(file) == modPath+"/internal/cmd/walk" {
			continue // the scenario, not the path
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(file, modPath), "/")
		af, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		all = append(all, funcsOf(fset, af, path.Dir(file), rel, bs)...)
	}
	return link(all), nil
}

// funcsOf returns the functions of file af, each marked with whether a
// block of bs inside it ran and with the calls of the blocks that ran.
func funcsOf(fset *token.FileSet, af *ast.File, pkg, rel string, bs []block) []*fn {
	imports := map[string]string{}
	for _, im := range af.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	ran := func(pos token.Pos) bool {
		p := fset.Position(pos)
		for _, b := range bs {
			if b.ran && after(p.Line, p.Column, b.line0, b.col0) && after(b.line1, b.col1, p.Line, p.Column) {
				return true
			}
		}
		return false
	}
	var out []*fn
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		f := &fn{pkg: pkg, file: rel, name: fd.Name.Name, recv: recvName(fd), decl: fd, imports: imports}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && ran(c.Pos()) {
				f.ran = true
				f.calls = append(f.calls, c)
			}
			return true
		})
		start, end := fset.Position(fd.Body.Lbrace), fset.Position(fd.Body.Rbrace)
		for _, b := range bs {
			if b.ran && after(b.line0, b.col0, start.Line, start.Column) && after(end.Line, end.Column, b.line0, b.col0) {
				f.ran = true
			}
		}
		out = append(out, f)
	}
	return out
}

// after reports whether line:col is at or after line0:col0.
func after(line, col, line0, col0 int) bool {
	return line > line0 || (line == line0 && col >= col0)
}

func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// link resolves the calls of the stops among all's functions.
func link(all []*fn) *walk {
	funcs := map[string]*fn{}     // pkg.name → function
	methods := map[string][]*fn{} // name → the stops that are methods of that name
	w := &walk{calls: map[[2]*fn]bool{}}
	for _, f := range all {
		if !f.ran {
			continue
		}
		w.stops = append(w.stops, f)
		if f.recv == "" {
			funcs[f.pkg+"."+f.name] = f
		} else {
			methods[f.name] = append(methods[f.name], f)
		}
	}
	for _, f := range w.stops {
		for _, c := range f.calls {
			for _, g := range callees(f, c, funcs, methods) {
				w.calls[[2]*fn{f, g}] = true
			}
		}
		if g := forwardsTo(f, funcs, methods); g != nil {
			w.fwd = append(w.fwd, f)
		}
	}
	sort.Slice(w.stops, func(i, j int) bool {
		a, b := w.stops[i], w.stops[j]
		return a.file < b.file || (a.file == b.file && a.decl.Pos() < b.decl.Pos())
	})
	return w
}

// callees returns the stops call c of f may reach.
func callees(f *fn, c *ast.CallExpr, funcs map[string]*fn, methods map[string][]*fn) []*fn {
	fun := c.Fun
	for {
		switch x := fun.(type) {
		case *ast.IndexExpr:
			fun = x.X
			continue
		case *ast.IndexListExpr:
			fun = x.X
			continue
		case *ast.ParenExpr:
			fun = x.X
			continue
		}
		break
	}
	switch x := fun.(type) {
	case *ast.Ident:
		if g := funcs[f.pkg+"."+x.Name]; g != nil {
			return []*fn{g}
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if p, ok := f.imports[id.Name]; ok {
				if g := funcs[p+"."+x.Sel.Name]; g != nil {
					return []*fn{g}
				}
				return nil
			}
		}
		var same, other []*fn
		for _, g := range methods[x.Sel.Name] {
			if g.pkg == f.pkg {
				same = append(same, g)
			} else {
				other = append(other, g)
			}
		}
		if len(same) > 0 {
			return same
		}
		return other
	}
	return nil
}

// forwardsTo returns the stop f's body only calls (its one statement a
// call or the return of one), nil when f does more.
func forwardsTo(f *fn, funcs map[string]*fn, methods map[string][]*fn) *fn {
	if len(f.decl.Body.List) != 1 {
		return nil
	}
	var c *ast.CallExpr
	switch st := f.decl.Body.List[0].(type) {
	case *ast.ExprStmt:
		c, _ = st.X.(*ast.CallExpr)
	case *ast.ReturnStmt:
		if len(st.Results) == 1 {
			c, _ = st.Results[0].(*ast.CallExpr)
		}
	}
	if c == nil {
		return nil
	}
	if gs := callees(f, c, funcs, methods); len(gs) == 1 && gs[0] != f {
		return gs[0]
	}
	return nil
}

// print writes the walk's figures, and with verbose its stops per file.
func (w *walk) print(out io.Writer, verbose bool) {
	byFile := map[string][]*fn{}
	var files []string
	for _, f := range w.stops {
		if byFile[f.file] == nil {
			files = append(files, f.file)
		}
		byFile[f.file] = append(byFile[f.file], f)
	}
	across := 0
	for c := range w.calls {
		if c[0].file != c[1].file {
			across++
		}
	}
	var single []string
	for _, file := range files {
		if len(byFile[file]) == 1 {
			single = append(single, file+" "+byFile[file][0].String())
		}
	}
	fmt.Fprintf(out, "stops %d in %d files; returns %d (%d to another file); files with one stop %d; forwarders %d\n",
		len(w.stops), len(files), len(w.calls), across, len(single), len(w.fwd))
	if !verbose {
		return
	}
	for _, file := range files {
		names := make([]string, len(byFile[file]))
		for i, f := range byFile[file] {
			names[i] = f.String()
		}
		fmt.Fprintf(out, "  %-40s %2d  %s\n", file, len(names), strings.Join(names, " "))
	}
	fmt.Fprintln(out, "files with one stop:")
	for _, s := range single {
		fmt.Fprintln(out, "  "+s)
	}
	fmt.Fprintln(out, "forwarders:")
	for _, f := range w.fwd {
		fmt.Fprintf(out, "  %s %s\n", f.file, f)
	}
}

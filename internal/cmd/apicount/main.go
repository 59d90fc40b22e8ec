// Command apicount counts the exported identifiers, the lines of Go code and
// the lines of tests of each package of the module's public API: every package outside lab/,
// cmd/, examples/, any internal/ directory, testdata and nested modules. An exported
// identifier is a package-level const, var, type or func whose name is
// exported, or an exported method of an exported type (test files hold none). It prints one line per package and a total:
//
//	go run ./internal/cmd/apicount [-ceiling N] [dir]
//
// With -ceiling it exits 1 when the total is above N, so CI can hold the
// API to a size.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	ceiling := flag.Int("ceiling", 0, "exit 1 when the total exceeds this many exported identifiers (0: no check)")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	if err := run(os.Stdout, root, *ceiling); err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, root string, ceiling int) error {
	pkgs, err := count(root)
	if err != nil {
		return err
	}
	sum := pkgCount{Dir: "total"}
	for _, p := range pkgs {
		printCount(w, p)
		sum.Exported += p.Exported
		sum.Lines += p.Lines
		sum.TestLines += p.TestLines
	}
	printCount(w, sum)
	total := sum.Exported
	if ceiling > 0 && total > ceiling {
		return fmt.Errorf("%d exported identifiers, above the ceiling of %d", total, ceiling)
	}
	return nil
}

func printCount(w io.Writer, p pkgCount) {
	fmt.Fprintf(w, "%-20s %5d exported %6d lines %6d test lines\n", p.Dir, p.Exported, p.Lines, p.TestLines)
}

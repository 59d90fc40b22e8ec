// Command walk measures the walk a reader follows through the code along
// one path: the functions the path runs (its stops), the files they are
// in, and the calls between them (each a return to a function the walk
// left). It builds a copy of itself with coverage of every package of the
// module it imports, runs the path in that copy (the coverage counters
// cleared just before the path and written just after, see scenario.go),
// and reads the profile against the source:
//
//	go run ./internal/cmd/walk [-v] proxy|import
//
// proxy is one proxied Anthropic request, import one import through
// replay.ParseAll. A stop is a function (closures count as the function
// they are in) with a block the path ran; a return is a distinct call,
// from a block the path ran, to a stop: a call by name, or a method
// call resolved by its name to the stops of that name (in the caller's
// package when it has one). Calls through function values are not seen.
// -v lists the stops per file, the files holding one stop and the
// forwarders (stops whose body is one call of another stop).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the stops per file, the files holding one and the forwarders")
	record := flag.String("record", "", "run the path and write its coverage to this directory (the coverage build's mode)")
	flag.Parse()
	path := flag.Arg(0)
	if flag.NArg() != 1 || (path != "proxy" && path != "import") {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/cmd/walk [-v] proxy|import")
		os.Exit(2)
	}
	if err := run(path, *record, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "walk:", err)
		os.Exit(1)
	}
}

func run(path, record string, verbose bool) error {
	root, modPath, err := module()
	if err != nil {
		return err
	}
	if record != "" {
		if path == "proxy" {
			return walkProxy(record)
		}
		return walkImport(record, root)
	}
	w, err := measureWalk(root, modPath, path)
	if err != nil {
		return err
	}
	w.print(os.Stdout, verbose)
	return nil
}

// measureWalk builds this command with coverage, runs path in it and
// reads its walk.
func measureWalk(root, modPath, path string) (*walk, error) {
	pkgs, err := goOut(root, "list", "-deps", "-f", "{{if .Module}}{{if eq .Module.Path \""+modPath+"\"}}{{.ImportPath}}{{end}}{{end}}", "./internal/cmd/walk")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "walk")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, cov := filepath.Join(tmp, "walk"), filepath.Join(tmp, "cov")
	if err := os.Mkdir(cov, 0o755); err != nil {
		return nil, err
	}
	if _, err := goOut(root, "build", "-cover", "-covermode=atomic", "-coverpkg="+strings.Join(strings.Fields(pkgs), ","), "-o", bin, "./internal/cmd/walk"); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-record", cov, path)
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GOCOVERDIR="+cov)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", path, err, out)
	}
	prof := filepath.Join(tmp, "profile.txt")
	if _, err := goOut(root, "tool", "covdata", "textfmt", "-i="+cov, "-o="+prof); err != nil {
		return nil, err
	}
	blocks, err := readProfile(prof)
	if err != nil {
		return nil, err
	}
	return walkOf(root, modPath, blocks)
}

// module returns the module's root directory and path.
func module() (root, path string, err error) {
	out, err := goOut(".", "list", "-m", "-f", "{{.Dir}} {{.Path}}")
	if err != nil {
		return "", "", err
	}
	root, path, _ = strings.Cut(strings.TrimSpace(out), " ")
	return root, path, nil
}

func goOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

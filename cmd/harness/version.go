package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release of harness; builds from a module proxy report the
// module version instead.
const version = "0.1.0-dev"

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "version", "", "Print the version of harness and of the Go toolchain that built it.")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	fmt.Fprintf(e.stdout, "harness %s (%s %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

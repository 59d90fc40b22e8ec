package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// temporalBinary is the command that runs turns on Temporal. It lives in
// the repository's temporal module, so that this command (and every user
// of the core library) never compiles the Temporal SDK.
const temporalBinary = "harness-temporal"

// temporalBuild is the one command that builds it, run from the
// repository's root.
const temporalBuild = "(cd temporal && go install ./cmd/harness-temporal)"

// cmdWorker runs "harness-temporal worker" with the same arguments.
func cmdWorker(ctx context.Context, e *env, args []string) error {
	return execTemporal(ctx, e, "worker", args)
}

// wantsTemporal reports whether run's arguments ask for a turn on a
// Temporal cluster: a --temporal flag before any "--".
func wantsTemporal(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(a, "=")
		if name == "--temporal" || name == "-temporal" {
			return true
		}
	}
	return false
}

// execTemporal runs harness-temporal's command sub with args, found on
// PATH, with this command's streams; without it, it says how to build it.
func execTemporal(ctx context.Context, e *env, sub string, args []string) error {
	path, err := exec.LookPath(temporalBinary)
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%s runs on Temporal through the %s command, which is not on PATH; build it from the repository with: %s", sub, temporalBinary, temporalBuild)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", temporalBinary, err)
	}
	cmd := exec.CommandContext(ctx, path, append([]string{sub}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", temporalBinary, sub, err)
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness/internal/harnessdir"
	"github.com/agentharness/harness/store/sqlite"
)

// cmdSpill manages the spill files guards leave under a workspace's
// .harness/spill/ folder.
func cmdSpill(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		// Help asked for is output; with no subcommand it explains the error.
		w := e.stdout
		if len(args) == 0 {
			w = e.stderr
		}
		fmt.Fprintln(w, "Usage: harness spill gc --older-than DURATION [--workspace DIR] [--json]")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Spill files keep tool results that were too large to show the model in full.")
		fmt.Fprintln(w, "gc removes those last modified more than DURATION ago (\"7d\", \"36h\", \"1d12h\").")
		if len(args) == 0 {
			return fmt.Errorf("%w: want a subcommand: gc", errUsage)
		}
		return nil
	}
	switch args[0] {
	case "gc":
		return cmdSpillGC(ctx, e, args[1:])
	}
	return fmt.Errorf("%w: unknown subcommand %q (want gc)", errUsage, args[0])
}

func cmdSpillGC(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "spill gc", "", "Remove the spill files of a workspace (.harness/spill/) last modified more than\n"+
		"--older-than ago, and the conversation folders left empty. Prints what was removed.\n\n"+
		"Most spilled results are also kept whole in the transcript store; a result that arrived as a stream\n"+
		"(shell output) and overflowed the ceiling is kept only in its spill file: gc keeps those files\n"+
		"(it reads .harness/harness.db to know them); delete the conversation to let them go.")
	olderThan := fs.String("older-than", "", "age of the files to remove: a Go duration (\"36h\", \"90m\") or days (\"7d\", \"1d12h\"); required")
	workspace := fs.String("workspace", ".", "workspace root whose .harness/spill/ is cleaned")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	if *olderThan == "" {
		return fmt.Errorf("%w: --older-than is required, for example --older-than 7d", errUsage)
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return fmt.Errorf("%w: --older-than: %v", errUsage, err)
	}
	keep, err := spillOnly(ctx, *workspace)
	if err != nil {
		return err
	}
	rep, err := harnessdir.GCWith(ctx, *workspace, age, &harnessdir.GCOptions{Keep: func(loc string) bool { return keep[loc] }})
	if err != nil {
		return err
	}
	if *jsonOut {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	fmt.Fprintf(e.stdout, "removed %d spill file(s), %d bytes, and %d empty folder(s); kept %d younger than %s",
		rep.Files, rep.Bytes, rep.Folders, rep.Kept, *olderThan)
	if rep.Pinned > 0 {
		fmt.Fprintf(e.stdout, " and %d older that hold the only full copy of a stored result", rep.Pinned)
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// spillOnly returns the spill files the workspace's transcript store
// points at as the only full copy of a result (none without a store). A
// store that cannot be read stops the collection: it alone knows which
// files must stay.
func spillOnly(ctx context.Context, workspace string) (map[string]bool, error) {
	path := filepath.Join(workspace, defaultDBPath)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return nil, fmt.Errorf("spill gc: reading the transcript store to keep the spill files it depends on: %w", err)
	}
	defer st.Close()
	keep, err := st.SpillOnly(ctx)
	if err != nil {
		return nil, fmt.Errorf("spill gc: %w", err)
	}
	return keep, nil
}

// maxAgeDays is the most days a time.Duration holds (about 292 years).
const maxAgeDays = int(math.MaxInt64 / int64(24*time.Hour))

// parseAge reads a Go duration, optionally led by whole days ("7d",
// "1d12h"), which time.ParseDuration does not know.
func parseAge(s string) (time.Duration, error) {
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a duration (want e.g. 7d, 36h, 1d12h)", s)
		}
		if n > maxAgeDays {
			return 0, fmt.Errorf("%q is more than %d days", s, maxAgeDays)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 7d, 36h, 1d12h)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	if days+d < days {
		return 0, fmt.Errorf("%q is longer than a duration can be", s)
	}
	return days + d, nil
}

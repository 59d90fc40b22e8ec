package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/agentharness/harness/replay"
)

// supplyFlags are the flags that fill in what a recording's format leaves
// out (replay.Supply): Claude Code and Codex record neither the system
// prompt nor the tool schemas their requests carried.
type supplyFlags struct {
	systemFile, toolsFile *string
	systemTokens          *int
}

func addSupplyFlags(fs *flag.FlagSet) *supplyFlags {
	return &supplyFlags{
		systemFile: fs.String("system-file", "", "count this file as the system prompt of recordings that do not record one (Claude Code, Codex before 0.9x, Gemini CLI)"),
		toolsFile: fs.String("tools-file", "", "offer these tool schemas (a JSON array: {name, description, input_schema}, OpenAI's {type: function, function}, or MCP's inputSchema)\n"+
			"to recordings that do not record them (Claude Code, Codex, Gemini CLI)"),
		systemTokens: fs.Int("assume-system-tokens", 0, "count a stand-in system prompt of about N tokens for recordings that record none (when --system-file is not given)"),
	}
}

// supply reads the files the flags name; nil when none is set.
func (f *supplyFlags) supply() (*replay.Supply, error) {
	if *f.systemFile == "" && *f.toolsFile == "" && *f.systemTokens == 0 {
		return nil, nil
	}
	if *f.systemTokens < 0 {
		return nil, fmt.Errorf("%w: --assume-system-tokens must not be negative", errUsage)
	}
	s := &replay.Supply{SystemTokens: *f.systemTokens}
	if *f.systemFile != "" {
		b, err := os.ReadFile(*f.systemFile)
		if err != nil {
			return nil, fmt.Errorf("--system-file: %w", err)
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("--system-file: %s is empty", *f.systemFile)
		}
		s.System = string(b)
	}
	if *f.toolsFile != "" {
		b, err := os.ReadFile(*f.toolsFile)
		if err != nil {
			return nil, fmt.Errorf("--tools-file: %w", err)
		}
		if s.Tools, err = replay.ParseToolSpecs(b); err != nil {
			return nil, fmt.Errorf("--tools-file: %s: %w", *f.toolsFile, err)
		}
	}
	return s, nil
}

// load imports the transcripts at pos with supply, printing on standard
// error what was skipped, with summary a summary per file and in total
// when a folder or several files were read, and the importers' warnings.
func load(ctx context.Context, e *env, supply *replay.Supply, pos []string, summary bool) ([]*replay.Recording, error) {
	if err := checkPaths(pos); err != nil {
		return nil, err
	}
	recs, skipped, err := replay.LoadWith(ctx, supply, pos...)
	if err != nil {
		return nil, err
	}
	if err := reportSkipped(e, pos, skipped, len(recs)); err != nil {
		return nil, err
	}
	if summary && manyFiles(pos) {
		printSummary(e, recs, len(skipped))
	}
	printWarnings(e, recs)
	return recs, nil
}

// checkPaths fails on the first of pos that does not exist, naming it
// alone, before anything is read.
func checkPaths(pos []string) error {
	for _, p := range pos {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file or folder", p)
		}
	}
	return nil
}

// reportSkipped prints the files skipped (one line per reason for files
// in no known format or with no model call), and fails when no recording
// (of n) could be imported from pos.
func reportSkipped(e *env, pos []string, skipped []replay.Skipped, n int) error {
	var unknown, empty, saved []string
	for _, s := range skipped {
		switch {
		case errors.Is(s.Err, replay.ErrSavedOutput):
			saved = append(saved, s.Path)
		case errors.Is(s.Err, replay.ErrNotTranscript):
			unknown = append(unknown, s.Path)
		case errors.Is(s.Err, replay.ErrNoModelCall):
			empty = append(empty, s.Path)
		default:
			fmt.Fprintf(e.stderr, "skipped %s\n", s.Reason)
		}
	}
	skippedLine(e, unknown, "in no known format")
	skippedLine(e, empty, "with no model call")
	skippedLine(e, saved, "of whole tool outputs the agent saved beside its sessions (tool-results, tool-outputs: not transcripts; the sessions record what the model was shown)")
	if n == 0 {
		return fmt.Errorf("no transcript could be imported from %s", strings.Join(pos, ", "))
	}
	return nil
}

// skippedLine prints one line for the files skipped for one reason,
// naming the first three.
func skippedLine(e *env, paths []string, why string) {
	if len(paths) == 0 {
		return
	}
	shown := paths[:min(len(paths), 3)]
	more := ""
	if len(paths) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(paths)-len(shown))
	}
	fmt.Fprintf(e.stderr, "skipped %d files %s: %s%s\n", len(paths), why, strings.Join(shown, ", "), more)
}

// manyFiles reports whether pos names a folder or more than one file.
func manyFiles(pos []string) bool {
	if len(pos) > 1 {
		return true
	}
	st, err := os.Stat(pos[0])
	return err == nil && st.IsDir()
}

// printSummary prints one line per file imported (its format, model
// contexts, model calls and results) and a total.
func printSummary(e *env, recs []*replay.Recording, skipped int) {
	type file struct {
		format                   string
		contexts, calls, results int
	}
	var order []string
	files := map[string]*file{}
	formats := map[string]int{}
	calls := 0
	for _, r := range recs {
		src, _, _ := strings.Cut(r.Source, "#") // a store's conversations are src#id
		f := files[src]
		if f == nil {
			f = &file{format: r.Format}
			files[src] = f
			order = append(order, src)
		}
		f.contexts++
		f.calls += r.Calls()
		for _, t := range r.Turns {
			for _, c := range t.Calls {
				f.results += len(c.Results)
			}
		}
		formats[r.Format]++
		calls += r.Calls()
	}
	for _, src := range order {
		f := files[src]
		fmt.Fprintf(e.stderr, "imported %s: %s, %d model contexts, %d model calls, %d results\n", src, f.format, f.contexts, f.calls, f.results)
	}
	var byFormat []string
	for k, n := range formats {
		byFormat = append(byFormat, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(byFormat)
	fmt.Fprintf(e.stderr, "imported %d files (%d skipped): %d model contexts (%s), %d model calls\n",
		len(order), skipped, len(recs), strings.Join(byFormat, ", "), calls)
}

// printWarnings prints what replays of recs cannot count as the runs did
// (Recording.Warnings): "warning: source: text" for a warning one
// recording has, and one line "warning: N recordings: text" for a warning
// many share (a folder of sessions repeats the format's caveats). Warnings
// that differ only in the count they start with are one line, with the
// range of counts.
func printWarnings(e *env, recs []*replay.Recording) {
	type group struct {
		srcs     []string
		texts    map[string]bool
		min, max int
	}
	var order []string
	by := map[string]*group{}
	for _, r := range recs {
		for _, w := range r.Warnings {
			n, rest := leadingCount(w)
			g := by[rest]
			if g == nil {
				g = &group{texts: map[string]bool{}, min: n, max: n}
				by[rest] = g
				order = append(order, rest)
			}
			g.srcs = append(g.srcs, r.Source)
			g.texts[w] = true
			g.min, g.max = min(g.min, n), max(g.max, n)
		}
	}
	for _, key := range order {
		g := by[key]
		switch {
		case len(g.srcs) == 1:
			for w := range g.texts {
				fmt.Fprintf(e.stderr, "warning: %s: %s\n", g.srcs[0], w)
			}
		case len(g.texts) == 1:
			for w := range g.texts {
				fmt.Fprintf(e.stderr, "warning: %d recordings: %s\n", len(g.srcs), w)
			}
		default:
			fmt.Fprintf(e.stderr, "warning: %d recordings: %d to %d %s\n", len(g.srcs), g.min, g.max, key)
		}
	}
}

// leadingCount splits "12 results were cut …" into 12 and "results were
// cut …"; a warning without a leading count is returned whole with -1.
func leadingCount(w string) (int, string) {
	num, rest, ok := strings.Cut(w, " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return -1, w
	}
	return n, rest
}

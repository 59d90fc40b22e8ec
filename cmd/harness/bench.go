package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/replay"
)

// cmdBench compares the presets on a folder of transcripts, or on the
// built-in scenario suite.
func cmdBench(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "bench", "[DIR|FILE…]", "Replay transcripts under every policy preset and compare effective tokens (uncached + 0.1 × cached\n"+
		"+ 4 × output), the ratio to keeping everything, the cached share and evidence retention. Transcripts\n"+
		"are mini-swe-agent trajectories, OpenAI chat lists, harness conversations or harness's store (.db:\n"+
		"every conversation in it). With no argument it runs the built-in scenario suite. A recording is\n"+
		"output-heavy when its largest tool result is at least 10,000 characters and a third of all its\n"+
		"result characters; --per-run shows the figures of each recording and sums the output-heavy ones.\n\n"+
		"Columns:\n"+bench.ColumnNotes)
	jsonOut := fs.Bool("json", false, "print the table as JSON (always with each recording's figures and its output weight)")
	perRun := fs.Bool("per-run", false, "also sum the output-heavy recordings apart, and print one line per recording and preset")
	presets := fs.String("presets", "", "comma-separated presets to run (default all policies; none is always included; the bound \"floor\" runs only when named)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	ps, err := pickPresets(*presets)
	if err != nil {
		return err
	}
	recs, err := loadOrSuite(ctx, e, pos)
	if err != nil {
		return err
	}
	tab, err := bench.Run(ctx, recs, &bench.Options{Presets: ps, Progress: progressBar(e.stderr)})
	if err != nil {
		return err
	}
	if *jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(tab)
	}
	if *perRun {
		return tab.WritePerRun(e.stdout)
	}
	return tab.WriteText(e.stdout)
}

// loadOrSuite imports the transcripts at pos (listing skipped files and
// the importers' warnings on standard error), or generates the built-in
// suite when pos is empty.
func loadOrSuite(ctx context.Context, e *env, pos []string) ([]*replay.Recording, error) {
	if len(pos) == 0 {
		return bench.Suite()
	}
	recs, skipped, err := replay.LoadContext(ctx, pos...)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		fmt.Fprintf(e.stderr, "skipped %s\n", s.Reason)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no transcript could be imported from %s", strings.Join(pos, ", "))
	}
	printWarnings(e, recs)
	return recs, nil
}

// printWarnings prints what replays of recs cannot count as the runs did
// (Recording.Warnings), one "warning: source: text" line each.
func printWarnings(e *env, recs []*replay.Recording) {
	for _, r := range recs {
		for _, w := range r.Warnings {
			fmt.Fprintf(e.stderr, "warning: %s: %s\n", r.Source, w)
		}
	}
}

func pickPresets(list string) ([]bench.Preset, error) {
	if list == "" {
		return nil, nil
	}
	var out []bench.Preset
	for _, n := range strings.Split(list, ",") {
		p, err := bench.Lookup(strings.TrimSpace(n))
		if err != nil {
			// The command's name already says bench.
			return nil, fmt.Errorf("%w: %s", errUsage, strings.TrimPrefix(err.Error(), "bench: "))
		}
		out = append(out, p)
	}
	return out, nil
}

// progressBar returns a progress callback drawing a bar on w when w is a
// terminal, and nil otherwise (pipes and files get no control characters).
func progressBar(w io.Writer) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(done, total int) {
		const width = 30
		n := width * done / max(total, 1)
		fmt.Fprintf(w, "\r[%s%s] %d/%d replays", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}

// Command labbench is `harness bench` with the lab's presets: it replays
// recorded runs under the named presets, the lab's ablations and ideas
// (harness-no-…, harness+…, harness@…) as well as the product's, and prints
// the table, or its JSON with -json.
//
//	cd lab && go run ./cmd/labbench -presets harness,harness-no-stuck,none DIR...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agentharness/harness/internal/benchcore"
	benchlab "github.com/agentharness/harness/lab/bench"
	"github.com/agentharness/harness/replay"
)

func main() {
	presets := flag.String("presets", "harness,none", "comma-separated preset names: the lab's and the product's")
	asJSON := flag.Bool("json", false, "print the table as JSON")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, *presets, *asJSON, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "labbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, names string, asJSON bool, paths []string) error {
	if len(paths) == 0 {
		return fmt.Errorf("name at least one recording or folder of recordings")
	}
	var ps []benchcore.Preset
	for _, name := range strings.Split(names, ",") {
		p, err := benchlab.Lookup(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	recs, skipped, err := replay.Load(paths...)
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		fmt.Fprintf(os.Stderr, "labbench: %d files skipped: not a recording in a known format\n", len(skipped))
	}
	t, err := benchcore.Run(ctx, recs, &benchcore.Options{Presets: ps})
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return t.WriteText(w)
}

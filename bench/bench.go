package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/tokens"
)

// Options tune Run; nil means defaults.
type Options struct {
	// Presets to run (default: all, and the bounds floor and oracle last). "none"
	// is always added, first: every ratio is to it.
	Presets []Preset
	// Workers replay in parallel (default GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each replay with the number
	// done and the total.
	Progress func(done, total int)
	// Through, when set, adds a last row: what reached a recording
	// upstream through an OpenAI-compatible proxy (see [Through]).
	Through *Through
}

// Run replays every recording under every preset and summarises.
func Run(ctx context.Context, recs []*replay.Recording, opts *Options) (*Table, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	tab, _, err := runReports(ctx, o, recs)
	return tab, err
}

// runReports replays recs under presets ("none" first) and returns the
// table and every report, indexed [recording][preset].
func runReports(ctx context.Context, o Options, recs []*replay.Recording) (*Table, [][]*replay.Report, error) {
	presets := o.Presets
	if len(presets) == 0 {
		presets = append(Presets(), References()...)
	}
	if presets[0].Name != "none" {
		none, _ := Lookup("none")
		var rest []Preset
		for _, p := range presets {
			if p.Name != "none" {
				rest = append(rest, p)
			}
		}
		presets = append([]Preset{none}, rest...)
	}
	replayed := len(presets) // presets[replayed:] is the --through row
	if o.Through != nil {
		presets = append(presets[:len(presets):len(presets)], o.Through.preset())
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	bpe, err := tokens.O200k()
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}

	type job struct{ r, p int }
	reports := make([][]*replay.Report, len(recs))
	needles := make([][]replay.Needle, len(recs))
	counters := make([]tokens.Counter, len(recs))
	for i, rec := range recs {
		reports[i] = make([]*replay.Report, len(presets))
		needles[i] = replay.Needles(rec)
		// One cache per recording: presets mostly show the same texts.
		counters[i] = tokens.NewCache(bpe, &tokens.CacheOptions{MaxEntries: 1 << 14})
	}
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		firstErr error
	)
	total := len(recs) * replayed
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < o.Workers; w++ {
		wg.Go(func() {
			for j := range jobs {
				rep, err := replay.Replay(ctx, recs[j.r], presets[j.p].Policy(), &replay.Options{Counter: counters[j.r], Needles: needles[j.r]})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("bench: %s under %s: %w", recs[j.r].Source, presets[j.p].Name, err)
					cancel()
				}
				reports[j.r][j.p] = rep
				done++
				if o.Progress != nil {
					o.Progress(done, total)
				}
				mu.Unlock()
			}
		})
	}
feed:
	for r := range recs {
		for p := range replayed {
			select {
			case jobs <- job{r, p}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	if o.Through != nil {
		if err := o.Through.runThrough(ctx, recs, counters, needles, reports, replayed); err != nil {
			return nil, nil, err
		}
	}
	return summarise(recs, presets, reports), reports, nil
}

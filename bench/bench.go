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
//
// Replays run in parallel (Options.Workers of them), every preset of every
// recording a job, and the table does not depend on their order: each
// recording's figures are folded into the totals in recording order once
// all its presets are done, and its replays (the conversations, requests
// and per-call figures, far larger than the recording) are dropped then.
// At most Workers + 1 recordings are open at a time, so memory is bounded
// by the largest few recordings, not by their number; the table keeps
// only each recording's per-preset totals.
func Run(ctx context.Context, recs []*replay.Recording, opts *Options) (*Table, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	presets := withNone(o.Presets)
	s := newSummary(presets, o.Through)
	err := replayAll(ctx, o, recs, s.presets, false, func(r int, reps []*replay.Report) {
		s.add(recs[r], reps)
	})
	if err != nil {
		return nil, err
	}
	return s.table(), nil
}

// runReports is Run keeping every report, indexed [recording][preset]
// (the audit draws each request of each preset).
func runReports(ctx context.Context, o Options, recs []*replay.Recording) (*Table, [][]*replay.Report, error) {
	s := newSummary(withNone(o.Presets), o.Through)
	reports := make([][]*replay.Report, len(recs))
	err := replayAll(ctx, o, recs, s.presets, true, func(r int, reps []*replay.Report) {
		reports[r] = reps
		s.add(recs[r], reps)
	})
	if err != nil {
		return nil, nil, err
	}
	return s.table(), reports, nil
}

// withNone is presets (default: all, and the references) with "none"
// first.
func withNone(presets []Preset) []Preset {
	if len(presets) == 0 {
		presets = append(Presets(), References()...)
	}
	if presets[0].Name == "none" {
		return presets
	}
	none, _ := Lookup("none")
	out := []Preset{none}
	for _, p := range presets {
		if p.Name != "none" {
			out = append(out, p)
		}
	}
	return out
}

// openRun is one recording being replayed: its shared counter and needles,
// and the reports of the presets done so far.
type openRun struct {
	counter tokens.Counter
	needles []replay.Needle
	reports []*replay.Report
	left    int
}

// jobDone is one replay's outcome.
type jobDone struct {
	r, p int
	rep  *replay.Report
	err  error
}

// replayAll replays recs under presets (presets[0] is none) on o.Workers
// workers and calls fold once per recording, in recording order, with its
// report under every preset of the table (the --through row last, when
// o.Through is set). A recording's reports are not held after fold.
// shown keeps each request's list of tool messages (CallStat.Shown).
func replayAll(ctx context.Context, o Options, recs []*replay.Recording, presets []Preset, shown bool, fold func(r int, reps []*replay.Report)) error {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	replayed := len(presets)
	if o.Through != nil {
		replayed-- // the last row is replayed through the proxy
	}
	bpe, err := tokens.O200k()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var through *throughSession
	if o.Through != nil {
		if through, err = o.Through.start(); err != nil {
			return err
		}
		defer through.close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		mu   sync.Mutex
		runs = map[int]*openRun{}
	)
	type job struct {
		r, p int
		run  *openRun
	}
	jobs, done := make(chan job), make(chan jobDone)
	slots := make(chan struct{}, o.Workers+1) // open recordings
	go func() {
		defer close(jobs)
		for r, rec := range recs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			// One cache per recording: presets mostly show the same texts.
			run := &openRun{counter: tokens.NewCache(bpe, &tokens.CacheOptions{MaxEntries: 1 << 16}),
				needles: replay.Needles(rec), reports: make([]*replay.Report, len(presets)), left: replayed}
			mu.Lock()
			runs[r] = run
			mu.Unlock()
			for p := range replayed {
				select {
				case jobs <- job{r, p, run}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			for j := range jobs {
				rep, err := replay.Replay(ctx, recs[j.r], presets[j.p].Policy(), &replay.Options{Counter: j.run.counter, Needles: j.run.needles, NoShown: !shown})
				if err != nil {
					err = fmt.Errorf("bench: %s under %s: %w", recs[j.r].Source, presets[j.p].Name, err)
				}
				select {
				case done <- jobDone{j.r, j.p, rep, err}:
				case <-ctx.Done():
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	var firstErr error
	next, finished, total := 0, 0, len(recs)*replayed
	for d := range done {
		if d.err != nil {
			if firstErr == nil {
				firstErr = d.err
				cancel()
			}
			continue
		}
		if firstErr != nil {
			continue
		}
		finished++
		if o.Progress != nil {
			o.Progress(finished, total)
		}
		mu.Lock()
		run := runs[d.r]
		mu.Unlock()
		run.reports[d.p] = d.rep
		run.left--
		// Fold every recording that is complete, in order.
		for {
			mu.Lock()
			run, ok := runs[next]
			mu.Unlock()
			if !ok || run.left > 0 {
				break
			}
			if through != nil {
				rep, err := through.replay(ctx, recs[next], run.counter, run.needles)
				if err != nil {
					firstErr = err
					cancel()
					break
				}
				run.reports[replayed] = rep
			}
			fold(next, run.reports)
			mu.Lock()
			delete(runs, next)
			mu.Unlock()
			next++
			<-slots
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

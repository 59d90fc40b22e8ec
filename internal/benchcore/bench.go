package benchcore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/agentharness/harness/internal/replayengine"
	"github.com/agentharness/harness/provider/catalog"
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
	// CacheTTL is how long the provider's prompt cache outlives its last
	// use: a request whose recorded response came more than CacheTTL after
	// the previous one's (replayengine.IdleGaps) finds the cache cold, and its
	// cached prefix is priced as uncached input (written again under
	// Anthropic's prices) for every preset alike; such a request counts as
	// a cache break too. Zero means catalog.DefaultCacheLifetime (5 minutes: Anthropic's
	// exact default lifetime and the shortest OpenAI documents), so the
	// zero Options price caches as providers bill them. Recordings that
	// keep no times (mini-swe-agent, SWE-agent, Gemini CLI, the suite) are
	// unaffected. A negative value is an error. Every preset is told the
	// lifetime (replayengine.Env.CacheTTL): harness's and harness proxy's idle
	// clears wait at least that long, as a user whose cache lives longer
	// sets --clear-when-idle to it.
	CacheTTL time.Duration
	// NoCacheExpiry prices every prefix shared with the previous request
	// as cached however long the pause before it (a warm cache: the
	// bench's pricing before caches expired by default); CacheTTL is then
	// ignored, and no preset clears for a cold cache.
	NoCacheExpiry bool
	// Cuts lists, in each recording's cell of every preset but none, the
	// results the preset cut there, each with what hiding it saved and
	// what reading it back cost (Figures.Cuts): the replays then keep
	// each request's list of the results it shows, which costs memory in
	// proportion to the square of a recording's length.
	Cuts bool
}

// PricedTTL is the lifetime o prices the cache with, 0 for a cache that
// never expires.
func (o *Options) PricedTTL() (time.Duration, error) {
	switch {
	case o.NoCacheExpiry:
		return 0, nil
	case o.CacheTTL < 0:
		return 0, fmt.Errorf("bench: CacheTTL %v: want 0 (the default, %v) or more; NoCacheExpiry prices a warm cache", o.CacheTTL, catalog.DefaultCacheLifetime)
	case o.CacheTTL == 0:
		return catalog.DefaultCacheLifetime, nil
	}
	return o.CacheTTL, nil
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
	return RunEach(ctx, Slice(recs), len(recs), opts)
}

// Recordings hands recordings to yield, in order, and returns yield's
// first error (or its own). [replay.LoadEach] reads files this way, one
// at a time; [Slice] hands out recordings already in memory.
type Recordings func(ctx context.Context, yield func(*replay.Recording) error) error

// Slice hands out recs.
func Slice(recs []*replay.Recording) Recordings {
	return func(_ context.Context, yield func(*replay.Recording) error) error {
		for _, r := range recs {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// RunEach is Run over recordings taken from recs only as workers free up:
// at most Workers + 1 recordings are held at once, read or replayed, so a
// bench over a folder of long runs holds a few of them, not the folder.
// count is the number of recordings when known, for Progress's total (0:
// the total grows as recordings arrive). An error of recs ends the run
// with it, once the replays under way have stopped.
func RunEach(ctx context.Context, recs Recordings, count int, opts *Options) (*Table, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	ttl, err := o.PricedTTL()
	if err != nil {
		return nil, err
	}
	presets := WithNone(o.Presets)
	s := NewSummary(presets, o.Through, ttl)
	s.cuts = o.Cuts
	err = ReplayAll(ctx, o, recs, count, s.presets, o.Cuts, func(_ int, rec *replay.Recording, reps []*replayengine.Report) {
		s.Add(rec, reps)
	})
	if err != nil {
		return nil, err
	}
	return s.Table(), nil
}

// RunReports is Run keeping every report, indexed [recording][preset]
// (the audit draws each request of each preset).
func RunReports(ctx context.Context, o Options, recs []*replay.Recording) (*Table, [][]*replayengine.Report, error) {
	ttl, err := o.PricedTTL()
	if err != nil {
		return nil, nil, err
	}
	s := NewSummary(WithNone(o.Presets), o.Through, ttl)
	s.cuts = o.Cuts
	reports := make([][]*replayengine.Report, len(recs))
	err = ReplayAll(ctx, o, Slice(recs), len(recs), s.presets, true, func(r int, rec *replay.Recording, reps []*replayengine.Report) {
		reports[r] = reps
		s.Add(rec, reps)
	})
	if err != nil {
		return nil, nil, err
	}
	return s.Table(), reports, nil
}

// WithNone is presets (default: all, and the references) with "none"
// first.
func WithNone(presets []Preset) []Preset {
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

// openRun is one recording being replayed: the recording, its shared
// counter and needles, and the reports of the presets done so far.
type openRun struct {
	rec     *replay.Recording
	counter tokens.Counter
	needles []replayengine.Needle
	reports []*replayengine.Report
	left    int
}

// jobDone is one replay's outcome.
type jobDone struct {
	r, p int
	rep  *replayengine.Report
	err  error
}

// replayJob is one replay to run: recording r under preset p.
type replayJob struct {
	r, p int
	run  *openRun
}

// replayer runs one ReplayAll: the recordings open (replayed but not yet
// folded) by index, and what every worker shares.
type replayer struct {
	o        Options
	src      Recordings
	presets  []Preset
	shown    bool
	replayed int // presets replayed in-process (the --through row is not)
	bpe      tokens.Counter
	through  *throughSession
	slots    chan struct{} // one per open recording
	// ttl is the cache's lifetime the replays are priced with
	// (Options.cacheTTL; 0: it never expires), told to every preset.
	ttl time.Duration

	mu   sync.Mutex
	runs map[int]*openRun
	// total counts the replays to run: known up front, or grown as the
	// recordings arrive; srcErr is the error that ended the recordings.
	total, known int
	srcErr       error
}

// ReplayAll replays recs under presets (presets[0] is none) on o.Workers
// workers and calls fold once per recording, in recording order, with its
// report under every preset of the table (the --through row last, when
// o.Through is set). A recording's reports are not held after fold: at
// most o.Workers+1 recordings are open at once.
// shown keeps each request's list of tool messages (CallStat.Shown).
func ReplayAll(ctx context.Context, o Options, recs Recordings, count int, presets []Preset, shown bool, fold func(r int, rec *replay.Recording, reps []*replayengine.Report)) error {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	rp := &replayer{o: o, src: recs, presets: presets, shown: shown, replayed: len(presets),
		slots: make(chan struct{}, o.Workers+1), runs: map[int]*openRun{}}
	if o.Through != nil {
		rp.replayed-- // the last row is replayed through the proxy
	}
	rp.known = count * rp.replayed
	var err error
	if rp.ttl, err = o.PricedTTL(); err != nil {
		return err
	}
	if rp.bpe, err = tokens.O200k(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if o.Through != nil {
		if rp.through, err = o.Through.start(); err != nil {
			return err
		}
		defer rp.through.close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs, done := make(chan replayJob), make(chan jobDone)
	go rp.feed(ctx, cancel, jobs)
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() { rp.work(ctx, jobs, done) })
	}
	go func() { wg.Wait(); close(done) }()
	err = rp.collect(ctx, cancel, done, fold)
	rp.mu.Lock()
	srcErr := rp.srcErr
	rp.mu.Unlock()
	if srcErr != nil {
		// The replays it cancelled failed with ctx: the source's error is
		// what ended the run.
		return fmt.Errorf("bench: %w", srcErr)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// feed opens the recordings in order, taking each from the source as a
// slot frees up, and sends their jobs. An error of the source cancels the
// run.
func (rp *replayer) feed(ctx context.Context, cancel func(), jobs chan<- replayJob) {
	defer close(jobs)
	r := 0
	err := rp.src(ctx, func(rec *replay.Recording) error {
		select {
		case rp.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		// One cache per recording: presets mostly show the same texts.
		run := &openRun{rec: rec, counter: tokens.NewCache(rp.bpe, &tokens.CacheOptions{MaxEntries: 1 << 16}),
			needles: replayengine.Needles(rec), reports: make([]*replayengine.Report, len(rp.presets)), left: rp.replayed}
		rp.mu.Lock()
		rp.runs[r] = run
		rp.total += rp.replayed
		rp.mu.Unlock()
		for p := range rp.replayed {
			select {
			case jobs <- replayJob{r, p, run}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		r++
		return nil
	})
	if err != nil && ctx.Err() == nil {
		rp.mu.Lock()
		rp.srcErr = err
		rp.mu.Unlock()
		cancel()
	}
}

// work runs jobs until there are none or ctx is done.
func (rp *replayer) work(ctx context.Context, jobs <-chan replayJob, done chan<- jobDone) {
	for j := range jobs {
		rep, err := replayengine.Replay(ctx, j.run.rec, rp.presets[j.p].Policy(), &replayengine.Options{Counter: j.run.counter, Needles: j.run.needles, NoShown: !rp.shown,
			CacheTTL: rp.ttl, NoCacheExpiry: rp.ttl == 0})
		if err != nil {
			err = fmt.Errorf("bench: %s under %s: %w", j.run.rec.Source, rp.presets[j.p].Name, err)
		}
		select {
		case done <- jobDone{j.r, j.p, rep, err}:
		case <-ctx.Done():
		}
	}
}

// collect files each finished replay with its recording and folds every
// complete recording in order. The first error cancels the rest and is
// returned once the workers have stopped.
func (rp *replayer) collect(ctx context.Context, cancel func(), done <-chan jobDone, fold func(r int, rec *replay.Recording, reps []*replayengine.Report)) error {
	var firstErr error
	next, finished := 0, 0
	for d := range done {
		if d.err != nil && firstErr == nil {
			firstErr = d.err
			cancel()
		}
		if firstErr != nil {
			continue
		}
		finished++
		if rp.o.Progress != nil {
			rp.mu.Lock()
			total := max(rp.known, rp.total)
			rp.mu.Unlock()
			rp.o.Progress(finished, total)
		}
		run := rp.open(d.r)
		run.reports[d.p] = d.rep
		run.left--
		if next, firstErr = rp.foldReady(ctx, next, fold); firstErr != nil {
			cancel()
		}
	}
	return firstErr
}

// open returns the open recording r.
func (rp *replayer) open(r int) *openRun {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.runs[r]
}

// foldReady folds every complete recording from next on, in order
// (replaying it through the proxy first when --through is set), closes
// it, and returns the first recording still open.
func (rp *replayer) foldReady(ctx context.Context, next int, fold func(r int, rec *replay.Recording, reps []*replayengine.Report)) (int, error) {
	for {
		run := rp.open(next)
		if run == nil || run.left > 0 {
			return next, nil
		}
		if rp.through != nil {
			rep, err := rp.through.replay(ctx, run.rec, run.counter, run.needles, !rp.shown)
			if err != nil {
				return next, err
			}
			run.reports[rp.replayed] = rep
		}
		fold(next, run.rec, run.reports)
		rp.mu.Lock()
		delete(rp.runs, next)
		rp.mu.Unlock()
		next++
		<-rp.slots
	}
}

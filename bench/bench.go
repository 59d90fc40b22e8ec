package bench

import (
	"context"

	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/replay"
)

// Options tune Run, RunEach and AuditRecordings; nil means defaults: every
// preset and the bounds, GOMAXPROCS replays in parallel, the prompt cache
// priced with its default lifetime. Presets lists the presets to run ("none",
// the baseline of every ratio, is always added first), Workers how many
// replays run at once, Progress is called after each replay, Through adds a
// row measuring an OpenAI-compatible proxy, CacheTTL and NoCacheExpiry set
// how the prompt cache is priced, and Cuts lists in each run's cell the
// results each preset cut there, with what hiding each saved and what
// reading it back cost.
type Options = benchcore.Options

// Through measures an OpenAI-compatible proxy on the bench's recordings:
// each recorded call is sent to URL as keeping everything would send it, the
// proxy forwards it to a recording upstream listening on Listener, and what
// arrived there is measured as the presets' requests are, in a last row.
type Through = benchcore.Through

// Preset is a named policy configuration (Name, Doc); Policy returns it as
// the replayengine.Policy package replay runs.
type Preset = benchcore.Preset

// Table is the outcome of a run: one Row per preset summed over every
// recording (Rows), the per-recording figures (Runs) and the output-heavy
// subset; WriteText, WritePerRun and its JSON encoding print it.
type Table = benchcore.Table

// Row is one preset's totals in a Table: its cost under every price model,
// ratio to keeping everything, cached share, evidence visible and
// recoverable, cache breaks, and what it risks run by run.
type Row = benchcore.Row

// Recordings hands recordings to yield, in order, and returns yield's first
// error (or its own): replay.LoadEach reads files this way, Slice hands out
// recordings already in memory.
type Recordings = benchcore.Recordings

// AuditReport is the audit of a set of recordings: what each cost and where
// its context went (Audits), and the presets' totals over all of them;
// Headline, WriteText and WriteHTML present it.
type AuditReport = benchcore.AuditReport

// Headline is what an audit opens with: what harness proxy would have saved
// on the recordings, in percent and in dollars at list prices.
type Headline = benchcore.Headline

// Run replays every recording under every preset of opts and sums the
// figures per preset. Replays run in parallel; the figures do not depend
// on their order.
func Run(ctx context.Context, recs []*replay.Recording, opts *Options) (*Table, error) {
	return benchcore.Run(ctx, recs, opts)
}

// RunEach is Run over recordings taken from recs only as workers free up,
// so only a few are held in memory at a time; count, when known (> 0),
// sizes the progress total.
func RunEach(ctx context.Context, recs Recordings, count int, opts *Options) (*Table, error) {
	return benchcore.RunEach(ctx, recs, count, opts)
}

// Slice hands out recs, in order, as Recordings.
func Slice(recs []*replay.Recording) Recordings { return benchcore.Slice(recs) }

// AuditRecordings audits recs: per recording, what it cost and where its
// context went, and the totals of the presets of opts (nil: every preset)
// over all of them, from the same replays.
func AuditRecordings(ctx context.Context, recs []*replay.Recording, opts *Options) (*AuditReport, error) {
	return benchcore.AuditRecordings(ctx, recs, opts)
}

// Presets returns every preset the bench compares: the baseline (none),
// harness's defaults and harness proxy's rule, then the other systems'
// documented rules.
func Presets() []Preset { return benchcore.Presets() }

// References returns the bounds, which are not policies: floor (every tool
// result empty: the least any policy on results could cost) and oracle (the
// results the agent will use whole, every other empty).
func References() []Preset { return benchcore.References() }

// Lookup returns the preset or bound called name, or an error listing the
// names there are.
func Lookup(name string) (Preset, error) { return benchcore.Lookup(name) }

// Suite returns the built-in scenarios, generated deterministically from
// typical agent runs, for a bench without recordings of one's own.
func Suite() ([]*replay.Recording, error) { return benchcore.Suite() }

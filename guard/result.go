package guard

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
)

// Defaults and limits of [ResultPolicy].
const (
	// DefaultMaxBytes is the default ceiling of one result: about 6k
	// tokens of English, generous for a file page or a query result, far
	// below what floods a context window.
	DefaultMaxBytes = 24 << 10
	// minMaxBytes is the smallest ceiling the guard enforces: the room a
	// marker naming a spill path needs. Smaller positive values are
	// raised to it.
	minMaxBytes = 256
	// defaultStreamKeep is how much of a stream the guard keeps in memory
	// (and so in the transcript) when it cannot spill it.
	defaultStreamKeep = 1 << 20
)

// ResultPolicyName names the guard in cuts and events.
const ResultPolicyName = "resultpolicy"

// ResultPolicy is the per-result guard: a ceiling on how much of one tool
// result reaches the model, a spill of the full payload to a file the model
// can page when the ceiling is hit, and an opt-in suppression of exact
// repeats. Its [ResultPolicy.Guard] is a [harness.Guard] for
// [harness.Options].Guards. The guard never turns a call into a failure.
//
// Size is measured on what the model would be sent
// ([harness.ToolResult.PayloadSize]); an image counts at its token price by
// its pixel size and always reaches the model whole, the text beside it cut
// to what the images leave of the ceiling. A result over the ceiling keeps
// its full payload (Parts is never changed) and gets a model copy of at
// most the ceiling: a preview (by default [Relevant]: head, tail and the
// lines that match what the agent looks for, cut at line breaks and UTF-8
// boundaries) around a marker naming the tool, the bytes in total and
// shown, the spill path and how to read the rest.
//
// Spill files go to <workspace>/.harness/spill/<conversation>/<call>-<tool>
// as raw text (.txt) when one text part holds most of the bytes, else as
// pretty-printed JSON. When the spill cannot be written the preview uses
// the whole ceiling and the marker says the full result is kept in the
// transcript only. A page of a spill file is never spilled again. A result
// that arrives as a Stream flows into the spill file with memory bounded by
// about twice the ceiling; the transcript then keeps the model copy and the
// spill file is the full record (Meta["spill_path"], Meta["stream_bytes"]).
//
// The zero value and a nil *ResultPolicy mean the defaults: ceiling 24 KiB
// (less for searches, listings and, after two spills, a shell's output:
// see MaxBytes), spill on, the [Relevant] preview, dedupe off.
type ResultPolicy struct {
	// MaxBytes is the ceiling of one result's model copy, values below
	// minMaxBytes raised to it. 0 (or less) means a ceiling by the call:
	// 8 KiB for a search's, a listing's or git's output (a shell command
	// starting with rg, grep, find, fd, ls, tree or git, or a tool named
	// for grep, glob or search), 10 KiB for a shell's other output once
	// two results of the conversation have been spilled (by this guard
	// or another, counted in the transcript and the call's round), and
	// DefaultMaxBytes for the rest, a file reader's results among them.
	MaxBytes int
	// NoCeiling turns the ceiling off (and with it spill and previews):
	// results reach the model whole unless a tool's own MaxBytes caps
	// them. Dedupe, when on, still acts.
	NoCeiling bool
	// NoSpill turns spilling off: an oversized result is cut to a
	// head+tail preview and its rest is kept in the transcript only.
	NoSpill bool
	// Preview chooses what of a spilled result the model sees. The default
	// is [Relevant]{} (1.5 KiB head, 1 KiB tail and 1.5 KiB of the lines
	// that match the call's arguments, the agent's reasoning and the turn's
	// input; exactly HeadTail's 3 KiB + 1 KiB when nothing matches). A
	// [ContextPreview] like it sees the call and the transcript and picks
	// lines from the middle when the whole text is at hand
	// (maxExcerptBytes); larger streams get its head and tail.
	Preview Preview
	// Dedupe suppresses exact repeats of read-only calls (off by default).
	Dedupe Dedupe
	// Tools overrides the policy for single tools, by tool name.
	Tools map[string]ToolLimit
	// Store receives spilled payloads. nil means a [spill.Dir] at the
	// workspace of each call (harness.CallInfo.Workspace); with no
	// workspace, nothing is spilled.
	Store spill.Store
	// StreamKeep is how many bytes of a stream are kept in memory (and in
	// the transcript) when it cannot be spilled (default 1 MiB, at least
	// the ceiling). Beyond it the middle of the stream is dropped and the
	// marker says so.
	StreamKeep int
}

// ToolLimit overrides a [ResultPolicy] for one tool.
type ToolLimit struct {
	// MaxBytes is the tool's own ceiling: 0 (or less) keeps the
	// policy's, values below minMaxBytes are raised to it.
	MaxBytes int
	// NoCeiling turns the ceiling off for this tool (Dedupe still acts;
	// Exempt takes the tool out of the policy altogether).
	NoCeiling bool
	// Exempt takes the tool out of the policy: no ceiling, no spill, no
	// dedupe (a vision tool whose images must reach the model whole). A
	// non-read-only exempt call still ends every earlier call's claim to
	// be repeated.
	Exempt bool
}

// Dedupe configures repeat suppression. A read-only call (ReadOnly, and
// not Network: an endpoint may answer differently) that repeats an earlier
// call of the same conversation — same tool, same arguments as canonical
// JSON, same result — with no non-read-only call in between gets a short
// model copy pointing at the earlier call instead of the same bytes again.
// The call still runs: what is suppressed is the payload, and only when it
// is byte-for-byte the same. If the earlier result is no longer visible to
// the model (trimmed or cleared, or covered by a compaction note: the rule
// Collapse uses, harness.CallInfo.StillShown), the repeat is shown in full
// and becomes the one later repeats point at.
//
// The decision is made from the transcript, like Collapse's: the guard
// stamps every result it admits (Meta[metaDedupe]: written, read, or the
// payload's digest) and walks back over the results before the call — the
// transcript, then the earlier calls of the call's own round
// (harness.CallInfo.RoundResults; a repeat waits for an identical call
// running beside it, so call order, not finish order, picks the
// reference). A result with no stamp (a call that failed before the guard
// saw its result, a round admitted without dedupe) counts as a
// modification. A conversation reloaded from a store dedupes as it would
// have live.
//
// Off by default: suppressing from the
// second call cut a benchmark's cost five times and lost a task (an agent
// paging a large file re-reads what it could not hold).
type Dedupe struct {
	// From is the first identical call that is suppressed: 2 suppresses
	// every repeat, 3 lets one repeat through. 0 (or less) is the
	// default: off. 1 is taken as 2.
	From int
}

// Guard returns the guard. It keeps no state between calls: repeat
// suppression reads what it needs from the transcript in
// harness.CallInfo (see [Dedupe]), so one guard may serve many agents and
// conversations at once.
func (p *ResultPolicy) Guard() harness.Guard {
	g := newResultGuard(p)
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			return g.run(ctx, call, next)
		}
	}
}

// resultGuard is a ResultPolicy with its defaults resolved.
type resultGuard struct {
	limit      int  // 0: no ceiling
	byCall     bool // MaxBytes unset: the ceiling is callCeiling's
	noSpill    bool
	preview    Preview
	tools      map[string]ToolLimit
	store      spill.Store
	streamKeep int
	dedupeFrom int // 0: dedupe off
}

func newResultGuard(p *ResultPolicy) *resultGuard {
	var cfg ResultPolicy
	if p != nil {
		cfg = *p
	}
	g := &resultGuard{
		limit:      resolveLimit(cfg.MaxBytes, cfg.NoCeiling, DefaultMaxBytes),
		byCall:     cfg.MaxBytes <= 0 && !cfg.NoCeiling,
		noSpill:    cfg.NoSpill,
		preview:    cfg.Preview,
		store:      cfg.Store,
		streamKeep: cfg.StreamKeep,
		tools:      make(map[string]ToolLimit, len(cfg.Tools)),
	}
	for name, tl := range cfg.Tools {
		g.tools[name] = tl
	}
	if g.preview == nil {
		g.preview = Relevant{}
	}
	if g.streamKeep <= 0 {
		g.streamKeep = defaultStreamKeep
	}
	if cfg.Dedupe.From > 0 {
		g.dedupeFrom = max(cfg.Dedupe.From, 2)
	}
	return g
}

// resolveLimit maps a MaxBytes field and its NoCeiling to a ceiling (0:
// none): off → 0, ≤ 0 → def, otherwise at least minMaxBytes.
func resolveLimit(n int, off bool, def int) int {
	switch {
	case off:
		return 0
	case n <= 0:
		return def
	}
	return max(n, minMaxBytes)
}

// limitFor returns the ceiling of a tool (0: none) and whether the tool is
// exempt from the policy.
func (g *resultGuard) limitFor(tool string) (int, bool) {
	tl, ok := g.tools[tool]
	switch {
	case !ok:
		return g.limit, false
	case tl.Exempt:
		return 0, true
	}
	return resolveLimit(tl.MaxBytes, tl.NoCeiling, g.limit), false
}

// ceilingFor is limitFor for one call whose result is res: where neither
// the policy nor the tool sets a ceiling, callCeiling's.
func (g *resultGuard) ceilingFor(ctx context.Context, info harness.CallInfo, call *harness.ToolCall, res *harness.ToolResult) (int, bool) {
	limit, exempt := g.limitFor(call.Name)
	if tl, own := g.tools[call.Name]; exempt || !g.byCall || own && (tl.MaxBytes > 0 || tl.NoCeiling) {
		return limit, exempt
	}
	return callCeiling(ctx, info, call, res), false
}

// storeFor returns where a call's spill goes, or nil when it cannot spill.
func (g *resultGuard) storeFor(info harness.CallInfo) spill.Store {
	switch {
	case g.noSpill:
		return nil
	case g.store != nil:
		return g.store
	case info.Workspace != "":
		return &spill.Dir{Workspace: info.Workspace}
	}
	return nil
}

// run is the guard around one call.
func (g *resultGuard) run(ctx context.Context, call *harness.ToolCall, next harness.ToolFunc) (*harness.ToolResult, error) {
	info, _ := harness.CallInfoFrom(ctx)
	res, err := next(ctx, call)
	if err != nil || res == nil {
		return res, err
	}
	limit, exempt := g.ceilingFor(ctx, info, call, res)
	var dd *dedupeCall
	if g.dedupeFrom > 0 {
		dd = newDedupeCall(info, call, res, exempt)
	}
	if exempt || (limit == 0 && dd == nil) {
		return res, nil // the agent drains a stream
	}
	var st *streamOutcome
	if res.Stream != nil {
		if st, err = g.consumeStream(ctx, call, info, res, limit, dd != nil); err != nil {
			return nil, err
		}
	}
	if dd != nil {
		if ctx.Err() != nil {
			stampDedupe(res, dedupeRead)
		} else {
			stamp := digestStamp(st.digest(res))
			stampDedupe(res, stamp)
			if ref, ok := dd.repeatOf(ctx, stamp, g.dedupeFrom); ok {
				g.applyDedupe(ctx, call, res, ref, limit)
				return res, nil
			}
		}
	}
	if st != nil && st.cut {
		return res, nil
	}
	if limit > 0 {
		skip := ""
		if st != nil {
			skip = st.skipSpill
		}
		g.applyCeiling(ctx, call, info, res, limit, skip)
	}
	return res, nil
}

// lastSpillLocator is the spill path of a result's newest cut, or "".
func lastSpillLocator(res *harness.ToolResult) string {
	for i := len(res.Cuts) - 1; i >= 0; i-- {
		if res.Cuts[i].Kind == harness.CutSpilled {
			return res.Cuts[i].Locator
		}
	}
	return ""
}

// markerSafe makes a string safe to put in a marker: valid UTF-8, one line, at
// most n bytes.
func markerSafe(s string, n int) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = validPrefix(s, n-len("…")) + "…"
	}
	return s
}

// emitResultCut reports a cut as a policy event.
func emitResultCut(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, cut harness.Cut, limit int, detail string) {
	data := map[string]any{
		"kind":        string(cut.Kind),
		"bytes_in":    cut.BytesIn,
		"bytes_shown": cut.BytesOut,
		"max_bytes":   limit,
	}
	if cut.Kind == harness.CutSpilled {
		data["spill_path"] = cut.Locator
	}
	if cut.Of != "" {
		data["dedupe_of"] = cut.Of
	}
	c := *call
	harness.Emit(ctx, harness.Event{Kind: harness.EventPolicy, Policy: ResultPolicyName, Call: &c, Detail: detail, Data: data})
}

func emitResultWarning(ctx context.Context, detail string) {
	harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: ResultPolicyName, Detail: detail})
}

func describeResultCut(call *harness.ToolCall, cut harness.Cut) string {
	switch cut.Kind {
	case harness.CutSpilled:
		return fmt.Sprintf("%s: %d bytes over the limit; spilled to %s, %d bytes shown", call.Name, cut.BytesIn, cut.Locator, cut.BytesOut)
	case harness.CutDeduped:
		return fmt.Sprintf("%s: repeat of call %s suppressed (%d bytes, %d shown)", call.Name, cut.Of, cut.BytesIn, cut.BytesOut)
	}
	return fmt.Sprintf("%s: %d bytes over the limit; truncated to %d bytes (%s)", call.Name, cut.BytesIn, cut.BytesOut, cut.Locator)
}

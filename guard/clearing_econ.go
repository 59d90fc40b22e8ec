package guard

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/agentharness/harness"
)

// EconClearName names [EconClear] in notes and events.
const EconClearName = "econ-clear"

// DefaultEconKeepRounds is how many of the newest rounds with results
// [EconClear] never clears.
const DefaultEconKeepRounds = 3

// EconClear is an opt-in [harness.ViewPolicy] that clears old tool results
// when, and only when, the clear pays for the cache miss it causes.
//
// Providers bill a request's unchanged prefix at about a tenth, so a
// result left alone costs 0.1 × its tokens on every later request, and
// clearing it saves that on every request still to come, while the
// request that clears re-sends everything after the first changed
// message uncached. CompactPolicy clears by size (at HighWater of the
// window), which on long runs that never approach the window means never,
// and a fixed low threshold (clear at N tokens) clears near the end of
// short runs, where the miss is never repaid. EconClear compares the two
// terms of the cost on every request:
//
//	saving = 0.1 × (tokens cleared − placeholder tokens) × expected remaining requests
//	miss   = tokens after the first changed message, as re-sent − 0.1 × the same messages as cached
//
// and clears when saving ≥ Margin × miss. The messages of the newest round
// are new in this request either way and count in neither term. The
// number of requests still to come is unknown when the agent runs, so it
// is estimated from what the agent knows: by default (Remaining nil) the
// number of requests made so far in the conversation, this one included —
// the median remaining length of a run that has already lasted that long
// under a scale-free prior (Lindy). It never looks ahead.
//
// What is cleared, and how, is [CompactPolicy]'s stage 1: every result of
// the rounds up to a mark (all but the newest KeepRounds rounds with
// results) becomes Clear's one-line placeholder naming the call and how to
// get it back (spill path or recall), and the mark is recorded as a note
// (harness.AddNote, By EconClearName) with the clearing notice CompactPolicy
// uses, so every later view — and CompactPolicy itself, which reproduces
// marks — shows exactly the same placeholders and the prefix stays
// cacheable. Run it after the chain's CompactPolicy and pass that policy
// as Clear, so both render placeholders alike. The zero value works.
//
// Measured (harness bench --presets harness+econ,harness+econ/k8,…): the
// economics hold — 0.788 → 0.670 × keeping everything on the recorded
// mini-swe-agent runs, never above it with the default KeepRounds — but
// clearing by age hides what agents use late (71.8% of the used strings
// visible with KeepRounds 3, 86.3% with 8), and a larger KeepRounds clears
// later, where the remaining requests are over-estimated: with 16 it costs
// more than keeping everything on two of three runs. Opt-in, for agents
// whose runs are long and whose results are not looked at again.
type EconClear struct {
	// Clear renders placeholders and counts tokens (its Counter and
	// NoRecall are used); nil means a CompactPolicy with defaults.
	Clear *CompactPolicy
	// KeepRounds is how many of the newest rounds with results are never
	// cleared (default 3).
	KeepRounds int
	// Margin is how many times the miss the expected saving must be
	// (default 1: clear when it is expected to pay at all).
	Margin float64
	// Remaining estimates the requests still to come after the one being
	// built, given how many requests the conversation has made so far
	// (this one included); nil means that number (see the type doc).
	Remaining func(requests int) float64

	once sync.Once
	def  *CompactPolicy
}

// econDecision is the economics of one candidate clear.
type econDecision struct {
	mark                  compactPos
	cleared               int
	before, after         int     // request tokens without and with the clear
	saving, miss, remains float64 // see EconClear
}

// ApplyView clears v as described on [EconClear].
func (e *EconClear) ApplyView(ctx context.Context, v *harness.View) error {
	if e == nil || v == nil || v.Conversation == nil || v.Turn == nil {
		return nil
	}
	cp := e.Clear
	if cp == nil {
		e.once.Do(func() { e.def = &CompactPolicy{} })
		cp = e.def
	}
	cfg, err := cp.config()
	if err != nil {
		return fmt.Errorf("econ clear: %w", err)
	}
	c := newCompaction(ctx, v, cfg)
	mark := clearMark(v.Conversation)
	if mark != (compactPos{}) {
		c.clearThrough(mark) // a no-op when the chain's CompactPolicy ran first
	}
	d, sim, ok := e.consider(c, mark)
	margin := e.Margin
	if margin <= 0 {
		margin = 1
	}
	if !ok || d.saving < margin*d.miss {
		return nil
	}
	note := &harness.Note{Text: clearedNotice, By: EconClearName, ClearTurn: d.mark.turn, ClearRound: d.mark.round}
	if s := compactLatestNote(v.Conversation); s != nil {
		note.After, note.Text = s.After, s.Text
	}
	if err := harness.AddNote(ctx, v.Conversation, note); err != nil {
		return fmt.Errorf("econ clear: %w", err)
	}
	v.Messages, v.Origins = sim.v.Messages, sim.v.Origins
	harness.Emit(ctx, harness.Event{Kind: harness.EventPolicy, Policy: EconClearName, Round: v.Round,
		Detail: fmt.Sprintf("cleared %d old tool results through %s: %d → %d tokens; expected saving %.0f over %.0f requests ≥ %.1f × miss %.0f",
			d.cleared, d.mark, d.before, d.after, d.saving, d.remains, margin, d.miss),
		Data: map[string]any{"cleared_results": d.cleared, "clear_turn": d.mark.turn, "clear_round": d.mark.round,
			"tokens_before": d.before, "tokens_after": d.after, "saving": d.saving, "miss": d.miss, "remaining": d.remains}})
	return nil
}

// consider simulates clearing through the newest round outside the kept
// ones, on a copy of c's view, and prices it.
func (e *EconClear) consider(c *compaction, mark compactPos) (econDecision, *compaction, bool) {
	keep := e.KeepRounds
	if keep <= 0 {
		keep = DefaultEconKeepRounds
	}
	var rounds []compactPos
	for i := range c.v.Messages {
		if p, ok := c.resultPos(i); ok && !slices.Contains(rounds, p) {
			rounds = append(rounds, p)
		}
	}
	sort.Slice(rounds, func(i, j int) bool { return rounds[i].less(rounds[j]) })
	if len(rounds) <= keep {
		return econDecision{}, nil, false
	}
	next := rounds[len(rounds)-keep-1]
	if !mark.less(next) {
		return econDecision{}, nil, false
	}
	sim := c.clone()
	n := sim.clearThrough(next)
	if n == 0 {
		return econDecision{}, nil, false
	}
	text := clearedNotice
	if s := compactLatestNote(c.v.Conversation); s != nil {
		text = s.Text
	}
	sim.setNoteMessage(text)

	// The newest round (from the last assistant message on) is new in
	// this request with or without the clear.
	fresh := 0
	for i := len(c.v.Messages) - 1; i >= 0; i-- {
		fresh += c.raw[i]
		if c.v.Messages[i].Role == harness.RoleAssistant || c.v.Messages[i].Role == harness.RoleUser {
			break
		}
	}
	fo, fn := firstChange(c.v.Messages, sim.v.Messages)
	oldTail, newTail := sumInts(c.raw[fo:])-fresh, sumInts(sim.raw[fn:])-fresh
	d := econDecision{mark: next, cleared: n, before: sumInts(c.raw), after: sumInts(sim.raw)}
	d.remains = e.remaining(c.v)
	d.saving = 0.1 * float64(d.before-d.after) * d.remains
	d.miss = float64(newTail) - 0.1*float64(oldTail)
	return d, sim, d.before > d.after
}

// remaining is the expected number of requests after the one v builds.
func (e *EconClear) remaining(v *harness.View) float64 {
	n := requestsSoFar(v)
	if e.Remaining != nil {
		return e.Remaining(n)
	}
	return float64(n)
}

// requestsSoFar counts the requests of v's conversation up to and
// including the one v builds: one per recorded round, plus this one.
func requestsSoFar(v *harness.View) int {
	n := 1
	for _, t := range v.Conversation.Turns {
		if t == nil {
			continue
		}
		if t == v.Turn {
			return n + len(t.Rounds)
		}
		n += len(t.Rounds)
	}
	return n
}

// firstChange returns the index of the first message that differs between
// a and b, in each.
func firstChange(a, b []harness.Message) (int, int) {
	i := 0
	for i < len(a) && i < len(b) && sameText(&a[i], &b[i]) {
		i++
	}
	return i, i
}

// sameText reports whether two messages render alike (role, ids, text).
func sameText(a, b *harness.Message) bool {
	return a.Role == b.Role && a.ToolCallID == b.ToolCallID && len(a.ToolCalls) == len(b.ToolCalls) && a.Text() == b.Text()
}

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// clone copies c with a view of its own (messages, origins and their cuts),
// so a clear can be simulated without touching c's view.
func (c *compaction) clone() *compaction {
	v := *c.v
	v.Messages = slices.Clone(c.v.Messages)
	v.Origins = slices.Clone(c.v.Origins)
	for i := range v.Origins {
		v.Origins[i].Cuts = slices.Clone(v.Origins[i].Cuts)
	}
	d := *c
	d.v = &v
	d.raw = slices.Clone(c.raw)
	return &d
}

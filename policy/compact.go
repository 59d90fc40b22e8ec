package policy

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/clearnote"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/tokens"
)

// Defaults of [CompactPolicy].
const (
	defaultCompactHighWater     = 0.75
	defaultCompactTarget        = 0.55
	defaultCompactKeepRounds    = 3
	defaultCompactKeepTurns     = 6
	defaultCompactSummaryTokens = 600
	// defaultCompactClearFraction is ClearAtLeast's default, as a fraction
	// of the window.
	defaultCompactClearFraction = 0.10
	// DefaultCompactClearOld is CompactPolicy.ClearOld's default, in
	// tokens.
	DefaultCompactClearOld = 12_000
	// defaultCompactClearOldKeepRounds is ClearOldKeepRounds' default.
	defaultCompactClearOldKeepRounds = 4
)

// compactName names the policy in cuts, notes and events.
const compactName = "compact"

// CompactPolicy is a [harness.ViewPolicy] that keeps a conversation's
// requests inside the model's context window and, far below it, clears old
// tool results when that lowers what the run costs:
//
//   - Near the window: when the counted input of the next request is above
//     HighWater of the window (or the provider has just rejected it as too
//     large, View.Overflow), it compacts to Target, cheapest stage first:
//     old tool results become one-line placeholders naming how to get each
//     back (its spill file, the recall tool), at least ClearAtLeast tokens
//     at a time; then the turns older than the newest KeepTurns are
//     summarised by Summarizer into a [harness.Note].
//   - For cost: once the results older than the newest ClearOldKeepRounds
//     rounds would save ClearOld tokens, they are cleared in one chunk,
//     provided the clear is expected to pay for the prompt-cache miss it
//     causes and the savings the policy has banked for the conversation
//     cover it under every one of Prices (Unbounded drops the bank).
//   - After a pause longer than the prompt cache lives (ClearWhenIdle),
//     when a clear breaks no warm cache.
//
// Rule ([ClearRule]) decides which results a clear for cost takes and what
// a cleared result shows. Each decision is recorded once in the transcript
// as a clear mark, so every later view, in this process or another, clears
// exactly the same results and the cache breaks only at a clear. A result
// another shown result points at (a Collapse marker, a suppressed repeat)
// is kept with it. Tokens are counted with Counter on the request as it
// would be sent, scaled by Calibrator for Model. Run the policy last: it
// measures what the other policies built. A CompactPolicy may serve many
// conversations at once; do not copy it after first use.
type CompactPolicy struct {
	// HighWater and Target are fractions of the window (defaults 0.75 and
	// 0.55).
	HighWater, Target float64
	// Window is the model's context window in tokens. Zero looks Model up
	// in Windows. When neither knows it, the policy acts only on Overflow,
	// taking the rejected request's size as the window.
	Window int
	// Model names the model, for the window table and the calibration.
	Model string
	// Windows is the table Model is looked up in (default
	// catalog.DefaultWindows()).
	Windows catalog.Windows
	// Counter counts tokens (default: the shared o200k counter behind a
	// per-policy cache).
	Counter tokens.Counter
	// Calibrator, when set, scales counts by its factor for Model.
	Calibrator *tokens.Calibrator
	// ClearAtLeast is the smallest chunk cleared at once, in tokens
	// (default 10% of the window).
	ClearAtLeast int
	// KeepRounds is how many of the newest rounds keep their results
	// (default 3).
	KeepRounds int
	// ClearOld is the cost trigger (docs/design.md, "Clearing for cost"),
	// in tokens: old results are cleared, all at once, when clearing them
	// saves at least this many. Zero means DefaultCompactClearOld (12,000);
	// NoClearOld turns the trigger off. A negative value is an error.
	ClearOld int
	// NoClearOld turns the cost trigger off: old results are cleared only
	// when a request nears the window (HighWater).
	NoClearOld bool
	// ClearOldKeepRounds is how many of the newest rounds the cost trigger
	// never clears (default 4).
	ClearOldKeepRounds int
	// ClearWhenIdle clears at a request that comes more than this long
	// after the previous response (harness.View.Idle) every old result the cost trigger may clear
	// (all but the newest ClearWhenIdleKeepRounds rounds and the working
	// set), however few, without asking the savings bank: the provider's
	// prompt cache has expired, so the clear breaks no cache that is
	// still warm. Zero means catalog.CacheLifetime(Model), the time after which the
	// provider guarantees the cache gone (5 minutes for Claude, an hour
	// for OpenAI's automatic cache, off for a model it does not know). A
	// threshold must not be shorter than that (longer for a cache asked to
	// live longer, such as Anthropic's 1-hour cache): a clear while the
	// cache is warm costs a miss no bank has covered. A negative value is
	// an error; NoClearWhenIdle turns the clear off.
	ClearWhenIdle time.Duration
	// NoClearWhenIdle turns the clear when idle off, whatever the pauses.
	NoClearWhenIdle bool
	// ClearWhenIdleKeepRounds is how many of the newest rounds a clear
	// when idle never clears (zero means ClearOldKeepRounds; a negative
	// value is an error).
	ClearWhenIdleKeepRounds int
	// ClearWhenIdleBanked makes a clear when idle also need the savings
	// bank to cover it (priced as if the cache were still warm), so it
	// cannot make a run cost more than keeping everything even when the
	// cache outlived the pause. Without Prices' bank (Unbounded) it
	// changes nothing.
	ClearWhenIdleBanked bool
	// KeepTurns is how many of the newest turns are never summarised
	// (default 6); the turn being answered is one of them.
	KeepTurns int
	// Summarizer writes the summaries of stage 2; nil skips stage 2.
	Summarizer harness.Model
	// SummaryTokens bounds a summary (default 600).
	SummaryTokens int
	// NoRecall leaves the recall tool out of placeholders, for agents that
	// do not offer it.
	NoRecall bool
	// Prices are the price models a clear for cost must not lose under
	// (docs/design.md, "The savings bank"); nil means the list-price
	// models of the providers the policy knows.
	Prices []CachePrice
	// Unbounded turns the savings bank off: a clear for cost then needs
	// only to be expected to repay its cache miss, and the window's
	// compaction starts at HighWater whatever it costs, so a run can cost
	// more than keeping everything (the bench's presets of other systems
	// set it, as their rules know no bank).
	Unbounded bool
	// ChargeRereads charges the savings bank with the agent's re-reads:
	// a call of the recall tool or one whose arguments name a spill file,
	// which keeping everything never makes. A request answered with
	// re-reads alone is booked at its whole price, and the re-reads' calls
	// and results at the price of every request that carries them, so a
	// clear for cost waits until the cuts have saved what reading their
	// results back cost.
	ChargeRereads bool
	// Rule decides which old results the clears for cost take and what a
	// cleared result shows (see [ClearRule]); the zero Rule takes every one
	// and shows a one-line placeholder. The savings bank prices what the
	// rule leaves, as it is what stays.
	Rule ClearRule
	// Rules are the other rules a view may find named in the marks of
	// earlier clears (a policy whose Rule changed reads the marks its old
	// Rule wrote), so it reproduces what they took.
	Rules []ClearRule
	// NoKeepActive turns off what every clear does by default: leave whole
	// every result the agent quoted (an identifier-like word of the result,
	// in none of the messages up to the call that made it, used in a
	// message after it) in one of the newest ActiveRounds rounds up to
	// the rounds every clear keeps after its mark (the fewer of KeepRounds
	// and ClearOldKeepRounds): the results the agent is working with.
	// Those rounds were all there when the clear was decided, so every
	// later view keeps the same results and the prompt cache holds. A
	// later clear asks again of its own rounds and takes a result the
	// agent no longer quotes (its miss starts earlier in the prefix, which
	// the savings bank prices); a result once cleared stays cleared. The
	// savings bank prices the results kept whole, as they are what stays.
	// With the cost trigger's default kept rounds the rounds read end one
	// round before a clear for cost. A clear forced by a request that would
	// not fit (or Overflow) keeps no working set, and its mark says so.
	NoKeepActive bool
	// ActiveRounds is how many rounds the working-set rule reads (zero
	// means 3; a negative value is an error;
	// NoKeepActive turns the rule off).
	ActiveRounds int

	books   books
	once    sync.Once
	counter tokens.Counter
	initErr error
	// placeholders keeps the rendered placeholders between views, and
	// measures each conversation's last view's token counts.
	placeholders placeholderCache
	measures     measureMemo
}

// compactConfig is a CompactPolicy with defaults filled in.
type compactConfig struct {
	high, target   float64
	window         int
	model          string
	windows        catalog.Windows
	counter        tokens.Counter
	factor         float64
	clearAtLeast   int
	keepRounds     int
	keepTurns      int
	clearOld       int // 0: off
	clearOldKeep   int
	clearIdle      time.Duration // ClearWhenIdle resolved; 0: off
	clearIdleKeep  int           // ClearWhenIdleKeepRounds, resolved
	clearIdleBank  bool          // ClearWhenIdleBanked
	summarizer     harness.Model
	summaryTokens  int
	recall         bool
	own            *ClearRule  // Rule; nil: the default
	rules          []ClearRule // Rules
	active         int         // the working-set rule's rounds (NoKeepActive); 0: off
	placeholders   *placeholderCache
	measures       *measureMemo
	prices         []CachePrice // nil: the bank is off (Unbounded)
	chargeRereads  bool         // ChargeRereads
	windowGuessed  bool         // the window is the size of the rejected request
	overflowTarget bool         // the target is Target × the rejected request
}

func (p *CompactPolicy) config() (compactConfig, error) {
	p.once.Do(func() {
		if p.Counter != nil {
			p.counter = p.Counter
			return
		}
		bpe, err := tokens.O200k()
		if err != nil {
			p.initErr = fmt.Errorf("compact: %w", err)
			return
		}
		p.counter = tokens.NewCache(bpe, nil)
	})
	if p.initErr != nil {
		return compactConfig{}, p.initErr
	}
	c := compactConfig{
		high: p.HighWater, target: p.Target, window: p.Window, model: p.Model, windows: p.Windows,
		counter: p.counter, factor: 1, clearAtLeast: p.ClearAtLeast, keepRounds: p.KeepRounds,
		keepTurns: p.KeepTurns, clearOld: p.ClearOld, clearOldKeep: p.ClearOldKeepRounds, clearIdle: p.ClearWhenIdle, summarizer: p.Summarizer, summaryTokens: p.SummaryTokens, recall: !p.NoRecall,
		placeholders: &p.placeholders, measures: &p.measures, chargeRereads: p.ChargeRereads,
	}
	if c.high <= 0 {
		c.high = defaultCompactHighWater
	}
	if c.target <= 0 {
		c.target = defaultCompactTarget
	}
	if c.target > c.high {
		return c, fmt.Errorf("compact: Target %.2f is above HighWater %.2f", c.target, c.high)
	}
	if c.windows == nil {
		c.windows = catalog.DefaultWindows()
	}
	if c.window <= 0 {
		c.window, _ = c.windows.Lookup(c.model)
	}
	if p.Calibrator != nil {
		c.factor = p.Calibrator.Factor(c.model)
	}
	if c.keepRounds <= 0 {
		c.keepRounds = defaultCompactKeepRounds
	}
	if c.keepTurns <= 0 {
		c.keepTurns = defaultCompactKeepTurns
	}
	var err error
	if c.clearOld, err = offOrDefault("ClearOld", c.clearOld, DefaultCompactClearOld, p.NoClearOld, "NoClearOld turns the trigger off"); err != nil {
		return c, fmt.Errorf("compact: %w", err)
	}
	if c.clearOldKeep <= 0 {
		c.clearOldKeep = defaultCompactClearOldKeepRounds
	}
	c.clearIdleBank = p.ClearWhenIdleBanked
	if p.ClearWhenIdle < 0 {
		return c, fmt.Errorf("compact: ClearWhenIdle %s is negative (zero means the cache lifetime of the model; NoClearWhenIdle turns it off)", p.ClearWhenIdle)
	}
	c.clearIdle = p.IdleAfter()
	switch c.clearIdleKeep = p.ClearWhenIdleKeepRounds; {
	case c.clearIdleKeep < 0:
		return c, fmt.Errorf("compact: ClearWhenIdleKeepRounds %d is negative (zero means ClearOldKeepRounds)", c.clearIdleKeep)
	case c.clearIdleKeep == 0:
		c.clearIdleKeep = c.clearOldKeep
	}
	if c.summaryTokens <= 0 {
		c.summaryTokens = defaultCompactSummaryTokens
	}
	if c.own, err = rulesOf(p); err != nil {
		return c, err
	}
	c.rules = p.Rules
	if c.active, err = offOrDefault("ActiveRounds", p.ActiveRounds, defaultCompactActiveRounds, p.NoKeepActive, "NoKeepActive turns the rule off"); err != nil {
		return c, fmt.Errorf("compact: %w", err)
	}
	if !p.Unbounded {
		c.prices = p.Prices
		if len(c.prices) == 0 {
			c.prices = defaultCompactPrices()
		}
	}
	return c, nil
}

// compactPos orders rounds across turns.
type compactPos struct{ turn, round int }

func (a compactPos) less(b compactPos) bool {
	return a.turn < b.turn || (a.turn == b.turn && a.round < b.round)
}

func (a compactPos) String() string { return fmt.Sprintf("turn %d round %d", a.turn, a.round) }

// compaction is one application of the policy to one view.
type compaction struct {
	compactConfig
	ctx  context.Context
	v    *harness.View
	bank *bank // nil when the bank is off
	raw  []int // raw token count of each message
	tool int   // raw tokens of the tool schemas sent
	// args indexes the calls of the view's assistant messages, built only
	// when a call is not in the assistant message before its result.
	args map[string]harness.ToolCall
	// items are the conversation's placeholders (nil: rendered each time);
	// last is the entry item returned last, for message lastAt.
	items  *resultItems
	last   *resultItem
	lastAt int
	// pending is the mark being decided: the horizon of the results no
	// recorded mark covers yet (see horizonOf).
	pending compactPos
	// rule says which results the clear being decided or reproduced
	// takes (the zero rule: all; see takes).
	rule markRule
	// act is the working-set rule's memory when items is nil.
	act *activeState
	// forced are the marks of forced clears, which took the working set
	// too (see forcedMarks); nil until read, and again after a commit.
	forced map[compactPos]bool
}

// IdleAfter is the pause after which the policy clears when idle
// (ClearWhenIdle): ClearWhenIdle when positive, else catalog.CacheLifetime(Model);
// 0 when the clear is off (NoClearWhenIdle, or a model catalog.CacheLifetime does
// not know).
func (p *CompactPolicy) IdleAfter() time.Duration {
	switch {
	case p == nil || p.NoClearWhenIdle || p.ClearWhenIdle < 0:
		return 0
	case p.ClearWhenIdle > 0:
		return p.ClearWhenIdle
	}
	return catalog.CacheLifetime(p.Model)
}

// ApplyView clears and summarises v as described on [CompactPolicy].
func (p *CompactPolicy) ApplyView(ctx context.Context, v *harness.View) error {
	if v == nil || v.Conversation == nil {
		return nil
	}
	if p == nil {
		p = &CompactPolicy{}
	}
	cfg, err := p.config()
	if err != nil {
		return err
	}
	c := newCompaction(ctx, v, cfg)
	if cfg.placeholders != nil {
		items, release := cfg.placeholders.open(v.Conversation)
		defer release()
		c.items = items
	}
	if cfg.prices != nil {
		c.bank = p.books.open(v.Conversation, requestsSoFar(v), c.counter, cfg.prices, cfg.chargeRereads, cfg.chargeRereads && answeredWithRereads(v))
	}
	if err := c.apply(); err != nil {
		return err
	}
	if c.bank != nil {
		c.bank.book(c.v)
	}
	return nil
}

// apply is ApplyView's work on one view: reproduce the marks, clear for
// cost, then compact near the window.
func (c *compaction) apply() error {
	ctx, v := c.ctx, c.v

	// Reproduce every earlier decision before measuring.
	mark := c.reproduce()

	now, err := c.tokens(), error(nil)
	if c.clearIdle > 0 && v.Idle > c.clearIdle && !v.Overflow {
		// The cache is cold: a clear now costs no miss, so it needs no
		// chunk, no payback and no bank.
		c.rule = markRule{rule: c.own}
		if next, cleared, ok := c.chooseMark(mark, math.Inf(1), 0, c.clearIdleKeep); ok && (!c.clearIdleBank || c.covered(next)) {
			why := fmt.Sprintf("after %s idle (the prompt cache had expired)", v.Idle.Round(time.Second))
			if now, err = c.commitClear(next, cleared, now, "clear-idle", why, "idle_seconds", v.Idle.Seconds()); err != nil {
				return err
			}
			mark = next
		}
	}
	if c.clearOld > 0 && !v.Overflow {
		// Cost first: it needs no window, and a window clear below then
		// starts from what it left.
		c.rule = markRule{rule: c.own}
		if next, cleared, ok := c.chooseMark(mark, math.Inf(1), float64(c.clearOld), c.clearOldKeep); ok && c.pays(next, requestsSoFar(v)) && c.covered(next) {
			if now, err = c.commitClear(next, cleared, now, "clear-old", "to save their cost", "clear_old", c.clearOld); err != nil {
				return err
			}
			mark = next
		}
	}
	c.rule = markRule{} // the window's clear takes every result
	if c.window <= 0 {
		if !v.Overflow {
			return nil
		}
		c.window, c.windowGuessed = int(math.Ceil(now)), true
	}
	high, goal := c.high*float64(c.window), c.target*float64(c.window)
	if !v.Overflow && now <= high {
		return nil
	}
	if v.Overflow && now <= goal {
		// The provider counts more than we do: compact to Target of what
		// it just rejected.
		goal, c.overflowTarget = c.target*now, true
	}
	chunk := float64(c.clearAtLeast)
	if chunk <= 0 {
		chunk = defaultCompactClearFraction * float64(c.window)
	}

	before := now
	// Above HighWater but still inside the window, clearing is a choice the
	// bank must cover as well; a request that would not fit is cleared.
	// Held back, the view stays as it is: no summary either, which would
	// break the cache as well.
	forced := v.Overflow || now > float64(c.window)
	if forced {
		// A request that does not fit keeps no working set: the mark
		// records it, so every later view clears alike.
		c.rule = markRule{all: true}
	}
	next, cleared, ok := c.chooseMark(mark, now-goal, chunk, c.keepRounds)
	if !forced && c.bank != nil && (!ok || !c.covered(next)) {
		return nil
	}
	if ok {
		if err := c.commitMark(ctx, next); err != nil {
			return err
		}
		now = c.tokens()
		c.emit(fmt.Sprintf("cleared %d old tool results through %s: %.0f → %.0f tokens of a %d-token window", cleared, next, before, now, c.window),
			map[string]any{"stage": "clear", "tokens_before": roundTokens(before), "tokens_after": roundTokens(now), "window": c.window,
				"cleared_results": cleared, "clear_turn": next.turn, "clear_round": next.round, "overflow": v.Overflow,
				"window_from_request": c.windowGuessed, "target_from_request": c.overflowTarget}, nil)
	}
	if now <= goal {
		return nil
	}
	if c.summarizer == nil {
		c.emit(fmt.Sprintf("still %.0f tokens after clearing (target %.0f); no summarizer is set", now, goal),
			map[string]any{"stage": "over", "tokens": roundTokens(now), "target": roundTokens(goal), "window": c.window}, nil)
		return nil
	}
	return c.summarize(now, goal)
}

func roundTokens(f float64) int { return int(math.Round(f)) }

// commitMark clears every result through next and records the decision as
// a clearing note, so that every later view reproduces it.
func (c *compaction) commitMark(ctx context.Context, next compactPos) error {
	c.clearThrough(next)
	// The mark is its own note: it copies no summary text, and the view's
	// note message stays the summary, or becomes the notice if none.
	c.v.AddNote(&harness.Note{By: c.rule.by(), ClearTurn: next.turn, ClearRound: next.round})
	c.forced = nil
	text := clearnote.Text
	if summary := c.v.Conversation.Summary(); summary != nil {
		text = summary.Text
	}
	c.setNoteMessage(text)
	return nil
}

// newCompaction measures v for one compaction pass.
func newCompaction(ctx context.Context, v *harness.View, cfg compactConfig) *compaction {
	c := &compaction{compactConfig: cfg, ctx: ctx, v: v}
	c.measure()
	return c
}

// callOf returns the call whose result message i shows (placeholders
// name its arguments), and whether the view holds it: found in the
// assistant message before the result, where BuildView puts it, or else
// in an index of every call of the view.
func (c *compaction) callOf(i int, res *harness.ToolResult) (harness.ToolCall, bool) {
	if c.args == nil {
		for j := i - 1; j >= 0; j-- {
			if calls := c.v.Messages[j].ToolCalls; len(calls) > 0 {
				for _, tc := range calls {
					if tc.ID == res.CallID {
						return tc, true
					}
				}
				break
			}
		}
		c.args = map[string]harness.ToolCall{}
		for _, m := range c.v.Messages {
			for _, tc := range m.ToolCalls {
				c.args[tc.ID] = tc
			}
		}
	}
	call, ok := c.args[res.CallID]
	return call, ok
}

// item is the conversation's entry for the result message i shows.
func (c *compaction) item(i int) *resultItem {
	res := c.v.Origins[i].Result
	if c.last != nil && c.lastAt == i && c.last.res == res && c.fresh(c.last, i) {
		return c.last // clearable, then saving, of the same message
	}
	if it := c.items.current(i, res); it != nil && c.fresh(it, i) {
		c.last, c.lastAt = it, i
		return it
	}
	call, hasArg := c.callOf(i, res)
	it := c.items.lookup(i, res)
	if it == nil || it.hasArg != hasArg || it.recall != c.recall || !bytes.Equal(it.args, call.Args) || !c.fresh(it, i) {
		old := it
		it = &resultItem{res: res, args: call.Args, hasArg: hasArg, recall: c.recall, clearable: -1}
		if old != nil {
			it.stored = old.stored // the stored result's count holds
		}
		it.text, it.take, it.quoted, it.horizon = c.ask(i, c.own, &it.stored)
		it.parts = []harness.Part{harness.TextPart(it.text)}
		c.items.byRes[res] = it
	}
	c.items.place(i, it)
	c.last, c.lastAt = it, i
	return it
}

// fresh reports whether it holds for message i: it read nothing of what
// the agent quoted, or read it up to the result's horizon.
func (c *compaction) fresh(it *resultItem, i int) bool {
	return !it.quoted || it.horizon == c.horizon(i)
}

// clearMark is the newest clearing mark recorded in conv's notes.
func clearMark(conv *harness.Conversation) compactPos {
	var m compactPos
	for _, n := range conv.Notes {
		if p := (compactPos{n.ClearTurn, n.ClearRound}); m.less(p) {
			m = p
		}
	}
	return m
}

// measure counts every message and the tool schemas once.
func (c *compaction) measure() {
	count := func(m *harness.Message) int { return tokens.CountMessage(c.counter, m) }
	if c.measures != nil && c.v.Conversation != nil {
		c.raw = c.measures.counts(c.v.Conversation, c.v.Messages, count)
	} else {
		c.raw = make([]int, len(c.v.Messages))
		for i := range c.v.Messages {
			c.raw[i] = count(&c.v.Messages[i])
		}
	}
	c.tool = 0
	for _, t := range c.v.SentTools() {
		c.tool += tokens.CountTool(c.counter, t)
	}
}

// tokens is the calibrated count of the request the view makes.
func (c *compaction) tokens() float64 {
	n := promptunit.RequestOverhead + c.tool
	for _, r := range c.raw {
		n += r
	}
	return float64(n) * c.factor
}

// resultPos returns the compactPos of message i when it is a stored tool
// result, and whether it is one.
func (c *compaction) resultPos(i int) (compactPos, bool) {
	o := c.v.Origins[i]
	if o.Result == nil || c.v.Messages[i].Role != harness.RoleTool || o.Turn == 0 {
		return compactPos{}, false
	}
	return compactPos{o.Turn, o.Round}, true
}

func compactCleared(o harness.Origin) bool {
	for _, cut := range o.Cuts {
		if cut.Kind == harness.CutCleared {
			return true
		}
	}
	return false
}

// clearable reports whether clearing message i saves anything: a result
// whose stored model copy is no longer than its placeholder stays. The
// test reads the stored result, not the view, so it gives the same answer
// in every view.
//
// A result that points at others instead of repeating them (a collapse or
// a suppressed repeat: see pointsAt) is always clearable, even when its
// marker is shorter than the placeholder: left in place, it would point at
// results cleared with it, and keep them from ever being cleared.
func (c *compaction) clearable(i int) bool {
	res := c.v.Origins[i].Result
	if c.items == nil {
		return len(pointsAt(res)) > 0 || len(res.ModelText()) > len(c.placeholder(i))
	}
	it := c.item(i)
	if it.clearable < 0 {
		it.clearable = 0
		if len(pointsAt(res)) > 0 || len(res.ModelText()) > len(it.text) {
			it.clearable = 1
		}
	}
	return it.clearable == 1
}

// pointsAt lists the calls whose results res's model copy points at
// instead of repeating them: Cut.Refs of a collapse, Cut.Of of a
// suppressed repeat.
func pointsAt(res *harness.ToolResult) []string {
	var refs []string
	for _, cut := range res.Cuts {
		if cut.Kind != harness.CutDeduped {
			continue
		}
		if len(cut.Refs) > 0 {
			refs = append(refs, cut.Refs...)
		} else if cut.Of != "" {
			refs = append(refs, cut.Of)
		}
	}
	return refs
}

// clearThrough clears every result at or before mark but those a result
// after mark points at (see pinned).
func (c *compaction) clearThrough(mark compactPos) int {
	idx, _ := c.clearing(mark)
	for _, i := range idx {
		res := c.v.Origins[i].Result
		in := 0
		for _, part := range c.v.Messages[i].Parts {
			in += part.Size()
		}
		var err error
		if c.items != nil {
			// The same parts and cut as every earlier view: nothing is
			// allocated to reproduce a clear.
			it := c.item(i)
			err = c.v.Replace(i, it.parts, it.cutFor(in, res)...)
		} else {
			text := c.placeholder(i)
			err = c.v.Replace(i, []harness.Part{harness.TextPart(text)}, harness.Cut{Kind: harness.CutCleared, By: compactName, BytesIn: in, BytesOut: len(text), Locator: locator.Spill(res)})
		}
		if err != nil {
			continue // i is in range by construction
		}
		if m := &c.v.Messages[i]; m.ToolCallID == res.CallID && len(m.ToolCalls) == 0 {
			c.raw[i] = c.placeholderTokens(i) // the same message, counted once
		} else {
			c.raw[i] = tokens.CountMessage(c.counter, m)
		}
	}
	return len(idx)
}

// clearing lists the messages clearThrough(mark) would clear — results at
// or before mark, not yet cleared, longer than their placeholder and not
// pinned by a result after mark — and the tokens that saves.
func (c *compaction) clearing(mark compactPos) ([]int, float64) {
	c.pending = mark
	pinned := c.pinned(mark)
	var (
		idx   []int
		saved float64
	)
	for i := range c.v.Messages {
		p, ok := c.resultPos(i)
		if !ok || mark.less(p) || compactCleared(c.v.Origins[i]) || !c.clearable(i) || pinned[c.v.Origins[i].Result.CallID] || !c.takes(i) || c.keptActive(i, mark) {
			continue
		}
		idx = append(idx, i)
		saved += c.saving(i)
	}
	return idx, saved
}

// pinned lists the results a clear through mark must keep because a
// result still shown points at them (see pointsAt): clearing them would
// leave the pointer pointing at a placeholder, and the model without the
// lines. Shown are the results after mark and, in turn, the pinned ones,
// so a chain of pointers keeps every link; a pointer at or before mark
// that nothing pins is cleared with the results it points at. The answer
// depends only on stored cuts and the mark, so every view agrees.
func (c *compaction) pinned(mark compactPos) map[string]bool {
	var pinned map[string]bool
	var queue []string
	pin := func(refs []string) {
		for _, id := range refs {
			if !pinned[id] {
				if pinned == nil {
					pinned = map[string]bool{}
				}
				pinned[id] = true
				queue = append(queue, id)
			}
		}
	}
	for i := range c.v.Messages {
		if p, ok := c.resultPos(i); ok && (mark.less(p) || c.keptActive(i, mark)) && !compactCleared(c.v.Origins[i]) {
			pin(pointsAt(c.v.Origins[i].Result))
		}
	}
	if len(queue) == 0 {
		return pinned // the common case: nothing points back
	}
	byID := map[string]*harness.ToolResult{}
	for i := range c.v.Messages {
		if _, ok := c.resultPos(i); ok && !compactCleared(c.v.Origins[i]) {
			byID[c.v.Origins[i].Result.CallID] = c.v.Origins[i].Result
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if res, ok := byID[id]; ok {
			pin(pointsAt(res))
		}
	}
	return pinned
}

// saving is what clearing message i saves, in calibrated tokens.
func (c *compaction) saving(i int) float64 {
	return float64(c.raw[i]-c.placeholderTokens(i)) * c.factor
}

// commitClear commits the clear for cost through next (cleared results;
// the view held before tokens) and reports it as stage, with why in the
// message and key: val added to the event's figures. It returns the
// view's tokens after the clear.
func (c *compaction) commitClear(next compactPos, cleared int, before float64, stage, why, key string, val any) (float64, error) {
	if err := c.commitMark(c.ctx, next); err != nil {
		return before, err
	}
	now := c.tokens()
	c.emit(fmt.Sprintf("cleared %d old tool results through %s %s: %.0f → %.0f tokens", cleared, next, why, before, now),
		map[string]any{"stage": stage, "tokens_before": roundTokens(before), "tokens_after": roundTokens(now), "window": c.window,
			"cleared_results": cleared, "clear_turn": next.turn, "clear_round": next.round, key: val}, nil)
	return now, nil
}

// chooseMark picks the next mark: whole rounds, oldest first, never the
// newest keepRounds rounds with results, until at least need tokens and
// at least chunk tokens would be saved (or nothing more may be cleared,
// in which case it clears only if that reaches need or chunk, or on
// overflow).
// It returns the mark, how many results it clears, and whether it clears
// any.
func (c *compaction) chooseMark(mark compactPos, need, chunk float64, keep int) (compactPos, int, bool) {
	var all []compactPos
	if c.items != nil {
		all = c.items.rounds[:0] // the conversation's scratch buffer (held for the pass)
		defer func() { c.items.rounds = all[:0] }()
	}
	sorted := true // the view's results are in round order, as BuildView puts them
	for i := range c.v.Messages {
		if p, ok := c.resultPos(i); ok && (len(all) == 0 || all[len(all)-1] != p) {
			sorted = sorted && (len(all) == 0 || all[len(all)-1].less(p))
			all = append(all, p)
		}
	}
	// Sorted and each round once (a search per message made each view
	// quadratic).
	if !sorted {
		sort.Slice(all, func(i, j int) bool { return all[i].less(all[j]) })
	}
	all = slices.Compact(all)
	if len(all) <= keep {
		return mark, 0, false
	}
	var (
		saved   float64
		cleared int
		next    = mark
	)
	candidates := all[:len(all)-keep]
	if math.IsInf(need, 1) {
		// Everything clearable goes: only the newest candidate counts
		// (and each candidate costs a pass over the view).
		candidates = candidates[len(candidates)-1:]
	}
	// The working-set rule asks each candidate anew: one pass sums for one only.
	if first := c.firstAfter(candidates, mark); sorted && first >= 0 && (c.active <= 0 || first == len(candidates)-1) && len(c.pinned(candidates[first])) == 0 {
		next, saved, cleared = c.chooseInOnePass(candidates[first:], mark, need, chunk)
	} else {
		for _, p := range candidates {
			if !mark.less(p) {
				continue
			}
			if saved >= need && saved >= chunk {
				break
			}
			idx, s := c.clearing(p)
			next, saved, cleared = p, s, len(idx)
		}
	}
	// Too little to be worth a cache break: wait until a chunk has
	// accumulated (unless the provider has just rejected the request).
	// Without this, a conversation stuck above HighWater would clear one
	// round every round as rounds age out of the kept ones.
	if saved < chunk && saved < need && !c.v.Overflow {
		return mark, 0, false
	}
	return next, cleared, cleared > 0
}

// firstAfter is the index of the first candidate after mark, or -1.
func (c *compaction) firstAfter(candidates []compactPos, mark compactPos) int {
	for i, p := range candidates {
		if mark.less(p) {
			return i
		}
	}
	return -1
}

// chooseInOnePass is chooseMark's walk over candidates (all after mark,
// in order) in one pass over the view instead of a clearing pass per
// candidate: with the view's results in round order and no result after
// the first candidate pointing at others (nothing pinned), what clearing
// through a candidate clears is what clearing through the one before
// cleared plus the results up to it, summed in the same order, so the
// figures are clearing's exactly.
func (c *compaction) chooseInOnePass(candidates []compactPos, mark compactPos, need, chunk float64) (compactPos, float64, int) {
	next, saved, cleared := mark, 0.0, 0
	s, k, i := 0.0, 0, 0
	for _, p := range candidates {
		if saved >= need && saved >= chunk {
			break
		}
		c.pending = p
		for ; i < len(c.v.Messages); i++ {
			q, ok := c.resultPos(i)
			if !ok {
				continue
			}
			if p.less(q) {
				break
			}
			if !compactCleared(c.v.Origins[i]) && c.clearable(i) && c.takes(i) && !c.keptActive(i, p) {
				s += c.saving(i)
				k++
			}
		}
		next, saved, cleared = p, s, k
	}
	return next, saved, cleared
}

// pays reports whether clearing the results after mark through next is
// expected to repay its cache miss within as many more requests as the
// conversation has made so far (see "Clearing for cost").
func (c *compaction) pays(next compactPos, requests int) bool {
	idx, saved := c.clearing(next)
	if len(idx) == 0 {
		return false
	}
	first := idx[0]
	if clearMark(c.v.Conversation) == (compactPos{}) && c.v.Conversation.Summary() == nil {
		// The first clear also puts the clearing notice at the top of the
		// view (after the system prompt): everything from there is re-sent.
		first = 0
		if len(c.v.Messages) > 0 && c.v.Messages[0].Role == harness.RoleSystem {
			first = 1
		}
	}
	resent := float64(sumInts(c.raw[first:]))*c.factor - saved
	return 0.1*saved*float64(requests) >= 0.9*resent
}

// covered reports whether the savings bank covers clearing through next:
// with this request priced as it would be sent after the clear, the run
// still costs no more than keeping everything under every price (see "The
// savings bank"). Without a bank every clear is covered.
func (c *compaction) covered(next compactPos) bool {
	return c.bank == nil || c.bank.covers(c.afterClear(next))
}

// placeholder is the one line the result message i shows becomes when
// cleared. It depends only on the stored result, its call and the
// options, so every view renders it the same (and, with the
// conversation's entries, shows the same string).
func (c *compaction) placeholder(i int) string {
	if c.items != nil {
		return c.item(i).text
	}
	stored := 0
	text, _, _, _ := c.ask(i, c.own, &stored)
	return text
}

// placeholderTokens counts the tool message that shows the placeholder of
// message i (remembered with the placeholder: it depends on nothing else).
func (c *compaction) placeholderTokens(i int) int {
	res := c.v.Origins[i].Result
	if c.items == nil {
		ph := harness.ToolMessage(res)
		ph.Parts = []harness.Part{harness.TextPart(c.placeholder(i))}
		return tokens.CountMessage(c.counter, &ph)
	}
	it := c.item(i)
	if it.tokens == 0 {
		ph := harness.ToolMessage(res)
		ph.Parts = it.parts
		it.tokens = tokens.CountMessage(c.counter, &ph)
	}
	return it.tokens
}

// describe gives the pieces of res's placeholder (made by call; hasArg:
// the view holds the call): its kind, what made it, its size and how to
// get it back.
func (c *compaction) describe(res *harness.ToolResult, call harness.ToolCall, hasArg bool) (kind, what string, size int, back string) {
	what = res.Tool
	if hasArg {
		args := canonjson.OrRaw(call.Args)
		if utf8.RuneCountInString(args) > 80 {
			args = string([]rune(args)[:80]) + "…"
		}
		what += " " + args
	}
	size = res.Bytes
	if size <= 0 {
		size = res.PayloadSize()
	}
	kind = "result"
	if res.IsError {
		kind = "error result"
	}
	return kind, what, size, locator.HowToGetBack(locator.Spill(res), res.CallID, c.recall)
}

// setNoteMessage shows text as the note message at the top of the view,
// where BuildView puts the newest note (after the system prompt), so this
// request already looks like the next round's.
func (c *compaction) setNoteMessage(text string) {
	i, inserted := noteMessage(c.v, text)
	n := tokens.CountMessage(c.counter, &c.v.Messages[i])
	if inserted {
		c.raw = slices.Insert(c.raw, i, n)
		return
	}
	c.raw[i] = n
}

func (c *compaction) emit(detail string, data map[string]any, usage *harness.Usage) {
	harness.Emit(c.ctx, ofView(c.v, harness.Event{Kind: harness.EventPolicy, Policy: compactName, Round: c.v.Round, Detail: detail, Data: data, Usage: usage}))
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

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

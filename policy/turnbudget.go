package policy

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/tokens"
)

// Defaults of [TurnBudget].
const (
	// DefaultTurnChars is the evidence budget of one request, shared by the
	// current turn's tool results.
	DefaultTurnChars = 24_000
	// defaultTurnMinKeep is the floor: no result is trimmed below it (a
	// result trimmed to 200 characters is noise with a token cost).
	defaultTurnMinKeep = 1_200
	// defaultTurnMarker ends every trimmed result, so the model never reads
	// a trimmed result as the whole thing. TurnBudget appends how much was
	// removed and where the full result is.
	defaultTurnMarker = "\n… (trimmed to fit this turn's evidence budget — ask for one item if you need its full body)"
)

// shortTurnMarker replaces the marker when a tiny budget leaves no room
// for the full one; a trimmed result always says so.
const shortTurnMarker = "\n… (trimmed)"

// turnBudgetName names the policy in cuts and events.
const turnBudgetName = "turnbudget"

// When says which requests of a turn a [TurnBudget] trims, and how.
type When int

const (
	// FinalRound, the default, trims only the request made with tools
	// withheld (the synthesis call after the round limit, or after a
	// policy stopped the tool rounds), sharing the budget among all of
	// the turn's results at once. Mid-loop the model may still need a
	// full body, and earlier requests stay cache-friendly; a request in
	// which the model answers on its own, tools still offered, is not
	// trimmed.
	FinalRound When = iota
	// EveryRound trims every request of the turn, but keeps the newest
	// round's results whole unless they alone exceed the budget. The cut
	// moves as results arrive, so older results change in every request.
	EveryRound
	// OnArrival decides each result's share of the turn's budget once,
	// when its round stops being the newest: the round's results are
	// water-filled against the budget less what the turn's earlier rounds
	// show, less room for the rounds after it — the next round whole (the
	// newest then, which the model reads whole to choose its next call)
	// and the floor for each later round that can still be an older round
	// of a request with tools (the turn's round limit, Rounds). Every
	// request of a turn of at most Rounds rounds, the one in which the
	// model answers on its own included, therefore stays within the
	// budget as long as each share covers its results' floors and no
	// round stays whole for cost. A trim rewrites a result already sent
	// whole, so a share must repay that rewrite within three requests
	// under every default price model (defaultCompactPrices): a share that
	// would keep too much of its result drops to the floor, the slack
	// shows dropped results whole again, and a round whose rewrite does
	// not repay stays whole. A result is rewritten at most once, right
	// behind the previous request's cached prefix, which therefore never
	// shrinks.
	// Ended turns keep the shares they had in their last request. It is
	// not the default: results the model keeps using rounds or turns
	// later (a file read, then edited) lose their bodies too.
	OnArrival
)

// String returns "on-arrival", "final-round" or "every-round".
func (w When) String() string {
	switch w {
	case OnArrival:
		return "on-arrival"
	case FinalRound:
		return "final-round"
	case EveryRound:
		return "every-round"
	}
	return fmt.Sprintf("when(%d)", int(w))
}

// TurnBudget is a [harness.ViewPolicy] that gives a turn's tool results
// one shared evidence budget. The budget is shared by water-filling
// (waterFill): small results stay whole and the large ones are cut to a
// common cap, never below MinKeep, each ending with a visible marker that
// counts inside the cap and says how to fetch the full result. When
// chooses when the budget applies (default FinalRound: the synthesis
// call). Only the view changes: the stored results stay whole.
//
// Only tool messages are touched; the system prompt, user inputs and
// assistant messages are somebody else's budget. FinalRound and EveryRound
// touch only the turn being answered; OnArrival keeps an ended turn's
// shares as its last request showed them, so the next turn's requests
// extend that prefix. A nil *TurnBudget or zero fields mean defaults.
type TurnBudget struct {
	// Chars is the budget of one turn (default 24,000), in characters,
	// or in the Counter's unit when Counter is set.
	Chars int
	// MinKeep is the floor (default 1,200), in the same unit; it is never
	// below the size of the short marker, so every trim is visible.
	MinKeep int
	// Marker ends every trimmed result (default defaultTurnMarker); the
	// policy appends how much was removed and the spill path or call id
	// that fetches the full result.
	Marker string
	// When chooses the requests trimmed (default FinalRound).
	When When
	// Counter, when set, measures results in its own unit (tokens)
	// instead of characters.
	Counter tokens.Counter
	// Rounds is how many tool rounds of a turn OnArrival shares the
	// budget among (default harness.DefaultMaxRounds, the agent's round
	// limit), and keeps room for; later rounds' results stay whole. The
	// budget bounds the request that answers a turn of that many rounds;
	// the later rounds of a longer turn (a coding session) are left to
	// compaction. Arrive applies the same limit.
	Rounds int
	// Spill, when set, receives the whole text of a result trimmed while
	// no file holds it (its newest locator is a call id: no ceiling
	// spilled it), and the marker names that file and the store's hint
	// instead of the call id: for agents with no recall tool, such as a
	// client behind the proxy. Nil leaves the call id for recall.
	Spill spill.Store
}

// ApplyView trims the tool messages of v to the budget (see When).
func (b *TurnBudget) ApplyView(ctx context.Context, v *harness.View) error {
	cfg := b.withDefaults()
	if v == nil || v.Turn == nil || (cfg.When == FinalRound && !v.Final) {
		return nil
	}
	ms := cfg.measure()
	if cfg.When == OnArrival {
		return cfg.applyOnArrival(ctx, v, ms)
	}
	ev := resultsOf(v, ms, ofTurn(v.Turn.Index))
	if len(ev.idx) == 0 {
		return nil
	}
	var kept []int
	limit := 0
	if cfg.When == EveryRound {
		kept, limit = fillKeepingNewest(v, ev.idx, ev.sizes, ev.newest, cfg.Chars, cfg.MinKeep)
	} else {
		limit, kept = waterFill(ev.sizes, cfg.Chars, cfg.MinKeep)
	}
	s, err := cfg.cut(ctx, v, ev, ev.all(), kept, ms, true)
	if err != nil {
		return err
	}
	s.limit = limit
	cfg.report(ctx, v, s, ms)
	return nil
}

// Arrive trims the tool messages of v, the results new in one round of a
// turn (or in one request a proxy forwards) whose earlier results already
// show spent (in the budget's unit), to what the turn's budget has left: they share max(Chars − spent, 1) by
// water-filling, never below MinKeep. It returns what they show after the
// trims. It is the rule OnArrival applies to each round, for drivers that
// decide a result's model copy once, as it arrives (a proxy, which is
// handed the client's history and forwards each result the same way every
// time after). As under OnArrival, the budget is shared by the turn's
// first Rounds rounds: a result of a later round (its Origin's Round above
// Rounds) stays whole and is not counted, so a long turn (a coding
// session of tens of rounds) is left to compaction after them rather than
// shown every later result at the floor.
func (b *TurnBudget) Arrive(ctx context.Context, v *harness.View, spent int) (int, error) {
	cfg := b.withDefaults()
	ms := cfg.measure()
	ev := resultsOf(v, ms, func(o harness.Origin) bool { return o.Round <= cfg.Rounds })
	s, err := cfg.arrive(ctx, v, ev, ev.all(), spent, ms, true, false)
	if err != nil {
		return 0, err
	}
	if v.Turn != nil {
		cfg.report(ctx, v, s, ms)
	}
	return s.after, nil
}

// arrive water-fills the results ks of ev against what the turn has left
// after spent and trims them (see Arrive). rewrite says the results were
// already sent whole, so each trim rewrites them: shares that would not
// repay their rewrite become whole or the floor (repaidShares).
func (cfg *TurnBudget) arrive(ctx context.Context, v *harness.View, ev turnResults, ks []int, spent int, ms measure, loud, rewrite bool) (shares, error) {
	sizes := make([]int, len(ks))
	for j, k := range ks {
		sizes[j] = ev.sizes[k]
	}
	left := max(cfg.Chars-spent, 1)
	limit, kept := waterFill(sizes, left, cfg.MinKeep)
	if rewrite {
		kept = repaidShares(sizes, kept, left, cfg.MinKeep)
	}
	full := append([]int(nil), ev.sizes...)
	for j, k := range ks {
		full[k] = kept[j]
	}
	s, err := cfg.cut(ctx, v, ev, ks, full, ms, loud)
	s.limit = limit
	return s, err
}

// shares sums what one application of the budget did.
type shares struct {
	before, after, trimmed, results, limit int
}

// cut trims each result ks of ev to kept[k] (in ms's unit) when that is
// below its size. loud reports each trim as an event; a share decided
// earlier and only repeated in this view is not reported again.
func (cfg *TurnBudget) cut(ctx context.Context, v *harness.View, ev turnResults, ks, kept []int, ms measure, loud bool) (shares, error) {
	var s shares
	for _, k := range ks {
		s.before += ev.sizes[k]
		s.results++
		if kept[k] >= ev.sizes[k] {
			s.after += ev.sizes[k]
			continue
		}
		shown, err := cfg.trim(ctx, v, ev, k, kept[k], ms, loud)
		if err != nil {
			return s, err
		}
		s.after += shown
		s.trimmed++
	}
	return s, nil
}

// report emits the summary event of s, when it trimmed something.
func (cfg *TurnBudget) report(ctx context.Context, v *harness.View, s shares, ms measure) {
	if s.trimmed == 0 {
		return
	}
	harness.Emit(ctx, harness.Event{
		Kind: harness.EventPolicy, Conversation: convID(v), Turn: v.Turn.Index, Round: v.Round,
		Policy: turnBudgetName,
		Detail: fmt.Sprintf("turn evidence %d → %d %s: %d of %d results trimmed to a cap of %d (budget %d, floor %d)",
			s.before, s.after, ms.unit, s.trimmed, s.results, s.limit, cfg.Chars, cfg.MinKeep),
		Data: map[string]any{
			"unit": ms.unit, "budget": cfg.Chars, "min_keep": cfg.MinKeep, "cap": s.limit, "when": cfg.When.String(),
			"results": s.results, "trimmed": s.trimmed, "before": s.before, "after": s.after,
		},
	})
}

// withDefaults is a copy of b (the zero TurnBudget when b is nil) with the
// defaults in place of zero fields.
func (b *TurnBudget) withDefaults() TurnBudget {
	var cfg TurnBudget
	if b != nil {
		cfg = *b
	}
	if cfg.Chars <= 0 {
		cfg.Chars = DefaultTurnChars
	}
	if cfg.MinKeep <= 0 {
		cfg.MinKeep = defaultTurnMinKeep
	}
	if cfg.Marker == "" {
		cfg.Marker = defaultTurnMarker
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = harness.DefaultMaxRounds
	}
	// Every trim must carry a visible marker: the floor is never below the
	// short one.
	cfg.MinKeep = max(cfg.MinKeep, cfg.measure().count(shortTurnMarker))
	return cfg
}

// measure is the budget's unit: characters, or the Counter's.
func (cfg *TurnBudget) measure() measure {
	if cfg.Counter != nil {
		return measure{count: cfg.Counter.Count, unit: "tokens"}
	}
	return measure{count: utf8.RuneCountInString, chars: true, unit: "chars"}
}

// turnResults is evidence of a view: tool messages in view order (their
// indexes, texts and measured sizes) and the newest round they come from.
// A size counts the message's images at their price (imageWeight), which
// a trim never cuts: images holds that part of each size.
type turnResults struct {
	idx    []int
	texts  []string
	sizes  []int
	images []int
	newest int
}

// resultsOf collects the tool messages of v whose origin keep accepts.
func resultsOf(v *harness.View, ms measure, keep func(harness.Origin) bool) turnResults {
	var ev turnResults
	for i, m := range v.Messages {
		o := v.Origins[i]
		if m.Role != harness.RoleTool || !keep(o) {
			continue
		}
		t := m.Text()
		img := imageWeight(m.Parts, ms)
		ev.idx, ev.texts, ev.sizes = append(ev.idx, i), append(ev.texts, t), append(ev.sizes, ms.count(t)+img)
		ev.images = append(ev.images, img)
		ev.newest = max(ev.newest, o.Round)
	}
	return ev
}

// ofTurn keeps the results of turn (never a message with no turn, such
// as a note); inTurns keeps those of every turn.
func ofTurn(turn int) func(harness.Origin) bool {
	return func(o harness.Origin) bool { return o.Turn != 0 && o.Turn == turn }
}

func inTurns(o harness.Origin) bool { return o.Turn != 0 }

// all returns the positions 0…n-1 of ev's results.
func (ev turnResults) all() []int {
	ks := make([]int, len(ev.idx))
	for k := range ks {
		ks[k] = k
	}
	return ks
}

// trim cuts the k-th result of ev to keep (in ms's unit) with a marker
// that says where the full result is, records the cut, emits its event
// when loud and returns the size shown.
func (cfg *TurnBudget) trim(ctx context.Context, v *harness.View, ev turnResults, k, keep int, ms measure, loud bool) (int, error) {
	i := ev.idx[k]
	// Images stay whole: the text gets what they leave of the share, never
	// less than the floor.
	img := ev.images[k]
	textKeep := max(keep-img, cfg.MinKeep)
	if textKeep >= ev.sizes[k]-img {
		return ev.sizes[k], nil
	}
	res := v.Origins[i].Result
	loc, where, err := cfg.whole(ctx, v, res, locator.Newest(res, v.Messages[i].ToolCallID))
	if err != nil {
		return 0, err
	}
	text, shown, mark := trimText(ev.texts[k], ev.sizes[k]-img, textKeep, cfg.Marker, where, ms)
	shown += img
	cut := harness.Cut{
		Kind:     harness.CutTrimmed,
		By:       turnBudgetName,
		BytesIn:  len(ev.texts[k]),
		BytesOut: len(text),
		Locator:  loc,
	}
	others := nonTextParts(v.Messages[i].Parts)
	if err := v.Replace(i, []harness.Part{harness.TextPart(text)}, cut); err != nil {
		return 0, fmt.Errorf("turn budget: %w", err)
	}
	if len(others) > 0 {
		v.Messages[i].Parts = append(v.Messages[i].Parts, others...)
	}
	if !loud {
		return shown, nil
	}
	m := v.Messages[i]
	turn := 0
	if v.Turn != nil {
		turn = v.Turn.Index
	}
	harness.Emit(ctx, harness.Event{
		Kind: harness.EventPolicy, Conversation: convID(v), Turn: turn, Round: v.Round,
		Policy: turnBudgetName,
		Detail: fmt.Sprintf("%s result %s trimmed from %d to %d %s", m.ToolName, m.ToolCallID, ev.sizes[k], shown, ms.unit),
		Call:   &harness.ToolCall{ID: m.ToolCallID, Name: m.ToolName},
		Result: &harness.ResultInfo{Tool: m.ToolName, BytesIn: cut.BytesIn, BytesShown: cut.BytesOut, IsError: m.IsError, Cuts: []harness.Cut{cut}},
		Data:   map[string]any{"unit": ms.unit, "size_in": ev.sizes[k], "size_out": shown, "cap": keep, "marker": mark},
	})
	return shown, nil
}

// whole returns where the whole of a result about to be trimmed is, as a
// locator and as the marker names it: loc when a file holds it or no
// Spill is set, else a file Spill saves it to now.
func (cfg *TurnBudget) whole(ctx context.Context, v *harness.View, res *harness.ToolResult, loc string) (string, string, error) {
	if cfg.Spill == nil || res == nil || !locator.IsCall(loc) {
		return loc, locator.Hint(loc), nil
	}
	saved, err := cfg.Spill.Save(ctx, spill.Entry{Conversation: convID(v), CallID: res.CallID, Tool: res.Tool, Ext: "txt"}, strings.NewReader(res.FullText()))
	if err != nil {
		return "", "", fmt.Errorf("turn budget: spilling %s: %w", res.CallID, err)
	}
	where := saved.Locator
	if saved.Hint != "" {
		where += "; " + strings.TrimSuffix(saved.Hint, ".")
	}
	return saved.Locator, where, nil
}

// fillKeepingNewest is the EveryRound rule: the newest round's results stay
// whole and the older ones share what they leave, unless the newest alone
// exceed the budget; then every result of the turn shares it.
func fillKeepingNewest(v *harness.View, idx, sizes []int, newest, budget, minKeep int) ([]int, int) {
	var older []int
	newestTotal := 0
	for k, i := range idx {
		if v.Origins[i].Round == newest {
			newestTotal += sizes[k]
		} else {
			older = append(older, k)
		}
	}
	if newestTotal > budget {
		limit, kept := waterFill(sizes, budget, minKeep)
		return kept, limit
	}
	olderSizes := make([]int, len(older))
	for j, k := range older {
		olderSizes[j] = sizes[k]
	}
	limit, olderKept := waterFill(olderSizes, budget-newestTotal, minKeep)
	kept := append([]int(nil), sizes...)
	for j, k := range older {
		kept[k] = olderKept[j]
	}
	return kept, limit
}

// measure counts text in the budget's unit.
type measure struct {
	count func(string) int
	// chars is set when count is utf8.RuneCountInString (characters), which allows linear cuts.
	chars bool
	unit  string
}

// fit returns the longest prefix of text, cut at a rune boundary, such that
// prefix + marker measures at most limit.
func (ms measure) fit(text, marker string, limit int) string {
	prefix := cutPrefix(text, limit-ms.count(marker), ms)
	if ms.chars {
		return prefix // characters add up: nothing to re-check
	}
	for prefix != "" && ms.count(prefix+marker) > limit {
		_, w := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-w]
	}
	return prefix
}

// trimText cuts text (of size units) to at most limit units, marker and
// hint included, at a UTF-8 boundary. It returns the new text, its size
// and the marker it ends with.
func trimText(text string, size, limit int, marker, where string, ms measure) (string, int, string) {
	// The marker says how much was removed, which depends on how much room
	// the marker itself takes: iterate to the fixed point (two rounds in
	// practice, as only the number's digits can change).
	removed := size
	for range 4 {
		m := marker + fmt.Sprintf(" [%d of %d %s removed; full result: %s]", removed, size, ms.unit, where)
		if ms.count(m) > limit {
			return shortTrim(text, limit, ms)
		}
		prefix := ms.fit(text, m, limit)
		got := size - ms.count(prefix)
		if got == removed {
			out := prefix + m
			return out, ms.count(out), m
		}
		removed = got
	}
	// Not settled (a counter far from additive): say it without a number
	// rather than with a wrong one.
	m := marker + fmt.Sprintf(" [of %d %s; full result: %s]", size, ms.unit, where)
	if ms.count(m) > limit {
		return shortTrim(text, limit, ms)
	}
	out := ms.fit(text, m, limit) + m
	return out, ms.count(out), m
}

// shortTrim is the trim of a budget too small for the full marker: the
// short marker, itself cut when even it does not fit.
func shortTrim(text string, limit int, ms measure) (string, int, string) {
	m := shortTurnMarker
	if ms.count(m) > limit {
		m = cutPrefix(m, limit, ms)
		return m, ms.count(m), m
	}
	out := ms.fit(text, m, limit) + m
	return out, ms.count(out), m
}

// cutPrefix returns the longest prefix of s that ends on a rune boundary
// and measures at most n units.
func cutPrefix(s string, n int, ms measure) string {
	if n <= 0 {
		return ""
	}
	if ms.chars {
		for i := range s {
			if n == 0 {
				return s[:i]
			}
			n--
		}
		return s
	}
	count := ms.count
	if count(s) <= n {
		return s
	}
	// Gallop then bisect over rune boundaries, so that only prefixes near
	// the answer are counted (a 5 MB result cut to 6,000 tokens never has
	// its whole body counted twice). Counters are monotonic in practice;
	// the caller re-checks the result.
	var bounds []int // rune boundaries, bounds[j] = offset after j runes
	for i := range s {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(s))
	lo, hi := 0, len(bounds)-1 // count(s[:bounds[lo]]) <= n < count(s[:bounds[hi]])
	for step := n; step < hi; step *= 2 {
		if count(s[:bounds[step]]) > n {
			hi = step
			break
		}
		lo = step
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if count(s[:bounds[mid]]) <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s[:bounds[lo]]
}

// nonTextParts returns the parts that Text leaves out (images), which a
// trim keeps.
func nonTextParts(parts []harness.Part) []harness.Part {
	var out []harness.Part
	for _, p := range parts {
		if p.Type != harness.PartText && p.Type != harness.PartJSON {
			out = append(out, p)
		}
	}
	return out
}

// ofView returns e with the conversation and turn of v, the view a policy
// acted on. Emit fills them only from a tool call's CallInfo, which the
// context a view is built under does not carry, and an event without them
// is stored under no conversation, where Store.Events never finds it.
func ofView(v *harness.View, e harness.Event) harness.Event {
	if e.Conversation == "" {
		e.Conversation = convID(v)
	}
	if e.Turn == 0 && v.Turn != nil {
		e.Turn = v.Turn.Index
	}
	return e
}

func convID(v *harness.View) string {
	if v.Conversation == nil {
		return ""
	}
	return v.Conversation.ID
}

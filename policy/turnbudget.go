package policy

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/tokens"
)

// Defaults of [TurnBudget].
const (
	// DefaultTurnChars is the evidence budget of one request, shared by the
	// current turn's tool results.
	DefaultTurnChars = 24_000
	// DefaultTurnMinKeep is the floor: no result is trimmed below it (a
	// result trimmed to 200 characters is noise with a token cost).
	DefaultTurnMinKeep = 1_200
	// DefaultTurnMarker ends every trimmed result, so the model never reads
	// a trimmed result as the whole thing. TurnBudget appends how much was
	// removed and where the full result is.
	DefaultTurnMarker = "\n… (trimmed to fit this turn's evidence budget — ask for one item if you need its full body)"
)

// shortTurnMarker replaces the marker when a tiny budget leaves no room
// for the full one; a trimmed result always says so.
const shortTurnMarker = "\n… (trimmed)"

// turnBudgetName names the policy in cuts and events.
const turnBudgetName = "turnbudget"

// When says which requests of a turn a [TurnBudget] trims.
type When int

const (
	// FinalRound trims only the request made with tools withheld (the
	// synthesis call after the round limit, or after a policy stopped the
	// tool rounds). Mid-loop the model may still need a full body to
	// decide what to call next, and earlier requests stay cache-friendly.
	FinalRound When = iota
	// EveryRound trims every request of the turn, but keeps the newest
	// round's results whole unless they alone exceed the budget.
	EveryRound
)

// String returns "final-round" or "every-round".
func (w When) String() string {
	switch w {
	case FinalRound:
		return "final-round"
	case EveryRound:
		return "every-round"
	}
	return fmt.Sprintf("when(%d)", int(w))
}

// TurnBudget is a [harness.ViewPolicy] that gives the current turn's tool
// results one shared evidence budget per request. The budget is
// shared by water-filling ([WaterFill]): small results stay whole and the
// large ones are cut to a common cap, never below MinKeep, each ending with
// a visible marker that counts inside the cap and says how to fetch the
// full result. Only the view changes: the stored results stay whole.
//
// Only tool messages of the turn being answered are touched; the system
// prompt, user inputs, assistant messages and earlier turns' results are
// somebody else's budget. A nil *TurnBudget or zero fields mean defaults.
type TurnBudget struct {
	// Chars is the budget of one request (default 24,000), in characters,
	// or in the Counter's unit when Counter is set.
	Chars int
	// MinKeep is the floor (default 1,200), in the same unit; it is never
	// below the size of the short marker, so every trim is visible.
	MinKeep int
	// Marker ends every trimmed result (default DefaultTurnMarker); the
	// policy appends how much was removed and the spill path or call id
	// that fetches the full result.
	Marker string
	// When chooses the requests trimmed (default FinalRound).
	When When
	// Counter, when set, measures results in its own unit (tokens)
	// instead of characters.
	Counter tokens.Counter
}

// ApplyView trims the current turn's tool messages of v to the budget.
func (b *TurnBudget) ApplyView(ctx context.Context, v *harness.View) error {
	cfg := b.withDefaults()
	if v == nil || v.Turn == nil || (cfg.When == FinalRound && !v.Final) {
		return nil
	}
	ms := measure{count: harness.Chars, chars: true, unit: "chars"}
	if cfg.Counter != nil {
		ms = measure{count: cfg.Counter.Count, unit: "tokens"}
	}
	// Every trim must carry a visible marker: the floor is never below the
	// short one.
	cfg.MinKeep = max(cfg.MinKeep, ms.count(shortTurnMarker))

	ev := turnResultsOf(v, ms)
	if len(ev.idx) == 0 {
		return nil
	}
	kept := ev.sizes
	limit := 0
	if cfg.When == EveryRound {
		kept, limit = fillKeepingNewest(v, ev.idx, ev.sizes, ev.newest, cfg.Chars, cfg.MinKeep)
	} else {
		limit, kept = WaterFill(ev.sizes, cfg.Chars, cfg.MinKeep)
	}

	before, after, trimmed := 0, 0, 0
	for k := range ev.idx {
		before += ev.sizes[k]
		if kept[k] >= ev.sizes[k] {
			after += ev.sizes[k]
			continue
		}
		shown, err := cfg.trim(ctx, v, ev, k, kept[k], limit, ms)
		if err != nil {
			return err
		}
		after += shown
		trimmed++
	}
	if trimmed == 0 {
		return nil
	}
	harness.Emit(ctx, harness.Event{
		Kind: harness.EventPolicy, Conversation: convID(v), Turn: v.Turn.Index, Round: v.Round,
		Policy: turnBudgetName,
		Detail: fmt.Sprintf("turn evidence %d → %d %s: %d of %d results trimmed to a cap of %d (budget %d, floor %d)",
			before, after, ms.unit, trimmed, len(ev.idx), limit, cfg.Chars, cfg.MinKeep),
		Data: map[string]any{
			"unit": ms.unit, "budget": cfg.Chars, "min_keep": cfg.MinKeep, "cap": limit, "when": cfg.When.String(),
			"results": len(ev.idx), "trimmed": trimmed, "before": before, "after": after,
		},
	})
	return nil
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
		cfg.MinKeep = DefaultTurnMinKeep
	}
	if cfg.Marker == "" {
		cfg.Marker = DefaultTurnMarker
	}
	return cfg
}

// turnResults is the evidence of the view's turn: its tool messages in
// view order (their indexes, texts and measured sizes) and the newest
// round they come from.
type turnResults struct {
	idx    []int
	texts  []string
	sizes  []int
	newest int
}

func turnResultsOf(v *harness.View, ms measure) turnResults {
	var ev turnResults
	for i, m := range v.Messages {
		o := v.Origins[i]
		if m.Role != harness.RoleTool || o.Turn == 0 || o.Turn != v.Turn.Index {
			continue
		}
		t := m.Text()
		ev.idx, ev.texts, ev.sizes = append(ev.idx, i), append(ev.texts, t), append(ev.sizes, ms.count(t))
		ev.newest = max(ev.newest, o.Round)
	}
	return ev
}

// trim cuts the k-th result of ev to keep (in ms's unit) with a marker
// that says where the full result is, records the cut, emits its event and
// returns the size shown.
func (cfg *TurnBudget) trim(ctx context.Context, v *harness.View, ev turnResults, k, keep, limit int, ms measure) (int, error) {
	i := ev.idx[k]
	res := v.Origins[i].Result
	where := locator.Hint(locator.Newest(res, v.Messages[i].ToolCallID))
	text, shown, mark := trimText(ev.texts[k], ev.sizes[k], keep, cfg.Marker, where, ms)
	cut := harness.Cut{
		Kind:     harness.CutTrimmed,
		By:       turnBudgetName,
		BytesIn:  len(ev.texts[k]),
		BytesOut: len(text),
		Locator:  locator.Newest(res, v.Messages[i].ToolCallID),
	}
	others := nonTextParts(v.Messages[i].Parts)
	if err := v.ReplaceText(i, text, cut); err != nil {
		return 0, fmt.Errorf("turn budget: %w", err)
	}
	if len(others) > 0 {
		v.Messages[i].Parts = append(v.Messages[i].Parts, others...)
	}
	m := v.Messages[i]
	harness.Emit(ctx, harness.Event{
		Kind: harness.EventPolicy, Conversation: convID(v), Turn: v.Turn.Index, Round: v.Round,
		Policy: turnBudgetName,
		Detail: fmt.Sprintf("%s result %s trimmed from %d to %d %s", m.ToolName, m.ToolCallID, ev.sizes[k], shown, ms.unit),
		Call:   &harness.ToolCall{ID: m.ToolCallID, Name: m.ToolName},
		Result: &harness.ResultInfo{Tool: m.ToolName, BytesIn: cut.BytesIn, BytesShown: cut.BytesOut, IsError: m.IsError, Cuts: []harness.Cut{cut}},
		Data:   map[string]any{"unit": ms.unit, "size_in": ev.sizes[k], "size_out": shown, "cap": limit, "marker": mark},
	})
	return shown, nil
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
		limit, kept := WaterFill(sizes, budget, minKeep)
		return kept, limit
	}
	olderSizes := make([]int, len(older))
	for j, k := range older {
		olderSizes[j] = sizes[k]
	}
	limit, olderKept := WaterFill(olderSizes, budget-newestTotal, minKeep)
	kept := append([]int(nil), sizes...)
	for j, k := range older {
		kept[k] = olderKept[j]
	}
	return kept, limit
}

// measure counts text in the budget's unit.
type measure struct {
	count func(string) int
	// chars is set when count is harness.Chars, which allows linear cuts.
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

func convID(v *harness.View) string {
	if v.Conversation == nil {
		return ""
	}
	return v.Conversation.ID
}

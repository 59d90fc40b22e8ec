package toolselect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
)

// Defaults used when a Selector field is zero.
const (
	DefaultThreshold          = 24
	DefaultTopK               = 20
	defaultTimeout            = 4 * time.Second
	defaultRecentToolMessages = 12
)

// defaultIdentity returns the identity tool patterns kept in every
// selection (me, get_current_user, whoami): a model that must act "as the
// user" needs to know who that is.
func defaultIdentity() []string { return []string{"me", "get_current_user", "whoami"} }

// policyName names the selector in events.
const policyName = "toolselect"

// Selector chooses the tools of each turn. It implements
// [harness.Selector]. The zero value uses the defaults; it is safe for
// concurrent use (the default ranker caches its index across turns).
type Selector struct {
	// Threshold: a turn with at most this many tools offers them all
	// (zero means DefaultThreshold, 24). A negative value is an error
	// from Select: AlwaysRank is the switch that ranks every turn.
	Threshold int
	// AlwaysRank ranks every turn's tools, however few (Threshold off).
	AlwaysRank bool
	// TopK is how many tools a ranked turn offers (default 20), must-keep
	// tools included; when must-keep tools alone are more, they are all
	// offered.
	TopK int
	// Timeout bounds the ranking (default 4 s); past it the turn offers
	// every tool.
	Timeout time.Duration
	// Identity lists identity tool patterns kept in every selection (nil
	// means defaultIdentity(); an empty non-nil slice keeps none). Pinned
	// lists more patterns to keep. A pattern is a path.Match glob matched
	// against the tool's name and against the part after a "server__"
	// namespace, so "get_current_user" also keeps "github__get_current_user".
	Identity, Pinned []string
	// RecentToolMessages: every tool called in this many of the
	// conversation's latest tool messages is kept (zero means
	// defaultRecentToolMessages, 12). A negative value is an error from
	// Select: NoRecentTools is the switch that keeps none.
	RecentToolMessages int
	// NoRecentTools keeps no tool for having been called recently: only
	// identity and pinned tools are kept whatever their rank.
	NoRecentTools bool
	// Ranker ranks the tools (default a shared *BM25).
	Ranker Ranker
	// StickyTop and StickyShare keep a conversation's selection across
	// turns, so that its requests keep their cached prefix (the tool
	// schemas come first in every request). The first turn selects; a
	// later turn offers the list of the turn before while that list holds
	// the turn's must-keep tools and its StickyTop best-scored tools
	// (default defaultStickyTop, 5) score at least StickyShare (default
	// defaultStickyShare, 0.9) of what the StickyTop best of all tools
	// score. A turn it does not serve offers every tool, and so does
	// every turn after it: the list changes at most once after the first
	// turn. NoSticky selects afresh every turn. A
	// negative StickyTop or a StickyShare outside 0–1 is an error from
	// Select.
	StickyTop   int
	StickyShare float64
	NoSticky    bool
	// Defer offers every tool on every turn, the ones the conversation's
	// first turn did not select as a Stub (name, first sentence,
	// parameter names): the list is the same bytes on every request of
	// the conversation, so no change of subject breaks the prompt cache,
	// and a turn that needs a deferred tool calls it instead of waiting
	// for a new list (the engine answers arguments that do not fit the
	// full schema with the schema). It replaces the sticky rule: a
	// deferred list never settles on every tool. Pin the agent's own
	// tools (Pinned) when deferring: the first prompt's ranking may leave
	// out a tool every session uses, and each such tool's first call
	// then costs a round to learn its schema.
	Defer bool
	// SettleStubs changes what a kept list settles on when a turn's
	// subject leaves it (StickyTop, StickyShare): the kept list and the
	// new turn's own selection whole, and every other tool as a Stub,
	// from then on, instead of every tool whole. The list changes as
	// often (once), and the requests after it carry stubs where they
	// carried whole schemas; a later call of a stubbed tool whose
	// arguments do not fit gets the full schema back, as a deferred
	// tool's does. Ignored with Defer or NoSticky.
	SettleStubs bool

	once    sync.Once
	ranker  Ranker
	rankNam string
	memo    rankings
}

func (s *Selector) init() {
	s.once.Do(func() {
		s.ranker = s.Ranker
		if s.ranker == nil {
			s.ranker = &BM25{}
		}
		s.rankNam = rankerName(s.ranker)
	})
}

func rankerName(r Ranker) string {
	switch r.(type) {
	case *BM25:
		return "bm25"
	case *Embedder:
		return "embeddings"
	}
	return fmt.Sprintf("%T", r)
}

// Select implements harness.Selector. It never returns an error: when the
// ranking fails or times out, every tool is offered and a warning event
// says why.
func (s *Selector) Select(ctx context.Context, conv *harness.Conversation, input string, tools []harness.ToolSpec) ([]harness.ToolSpec, error) {
	s.init()
	start := time.Now()
	if err := s.check(); err != nil {
		return nil, err
	}
	threshold := s.Threshold
	switch {
	case s.AlwaysRank:
		threshold = -1
	case threshold == 0:
		threshold = DefaultThreshold
	}
	emit := func(kind harness.EventKind, detail string, data map[string]any) {
		e := harness.Event{Kind: kind, Policy: policyName, Detail: detail, Data: data}
		if conv != nil {
			e.Conversation, e.Turn = conv.ID, len(conv.Turns)
		}
		harness.Emit(ctx, e)
	}
	all := Measure(tools)
	if len(tools) <= threshold {
		emit(harness.EventPolicy, fmt.Sprintf("offered all %d tools (at most %d: no selection)", len(tools), threshold), all.data("all", all))
		return tools, nil
	}
	set := newToolSet(tools)
	now, err := s.freshOf(ctx, conv, input, set)
	var sel []bool
	mode, stub := modeRanked, s.Defer
	switch {
	case err == nil && s.Defer:
		sel, mode, err = s.firstTurn(ctx, conv, set, now)
	case err == nil:
		sel, mode, stub, err = s.chooseTurn(ctx, conv, set, now)
	}
	if err != nil {
		data := all.data("fallback", all)
		data["reason"] = err.Error()
		data["elapsed_ms"] = time.Since(start).Milliseconds()
		emit(harness.EventWarning, fmt.Sprintf("tool selection failed, offering all %d tools: %v", len(tools), err), data)
		return tools, nil
	}
	out := make([]harness.ToolSpec, 0, len(sel))
	deferred := 0
	for i, t := range tools {
		switch {
		case sel[i]:
			out = append(out, t)
		case stub:
			out = append(out, Stub(t))
			deferred++
		}
	}
	got := Measure(out)
	data := got.data("ranked", all)
	data["ranker"] = s.rankNam
	data["must_keep"] = keepNames(tools, now.keep)
	data["elapsed_ms"] = time.Since(start).Milliseconds()
	data["mode"] = mode
	if stub {
		data["deferred"] = deferred
	}
	emit(harness.EventPolicy, s.detail(mode, got, all, deferred, len(now.keep)), data)
	return out, nil
}

// detail says in the selection event what a turn offered and why: mode's
// reason, with deferred of the got tools as stubs, keep of them
// must-keep, out of all.
func (s *Selector) detail(mode string, got, all Schemas, deferred, keep int) string {
	const settled = "the previous turn's list lacks this turn's best-ranked or must-keep tools, and a new selection at each change of subject would break the prompt cache each time"
	switch {
	case mode == modeDeferred:
		return fmt.Sprintf("offered %d of %d tools whole and %d as stubs (%d of %d schema bytes): the first turn's selection, kept for the conversation so the prompt cache holds",
			got.Tools-deferred, all.Tools, deferred, got.Bytes, all.Bytes)
	case mode == modeKept:
		return fmt.Sprintf("kept the previous turn's %d of %d tools (%d of %d schema bytes): they serve this turn, and another list would break the prompt cache",
			got.Tools, all.Tools, got.Bytes, all.Bytes)
	case mode == modeSettled && deferred > 0:
		return fmt.Sprintf("offered %d of %d tools whole and %d as stubs (%d of %d schema bytes) from this turn on: %s",
			got.Tools-deferred, all.Tools, deferred, got.Bytes, all.Bytes, settled)
	case mode == modeSettled:
		return fmt.Sprintf("offered all %d tools from this turn on: %s", all.Tools, settled)
	case s.Defer:
		return fmt.Sprintf("offered %d of %d tools whole and %d as stubs (%d of %d schema bytes): %d must-keep, the rest ranked by %s",
			got.Tools-deferred, all.Tools, deferred, got.Bytes, all.Bytes, keep, s.rankNam)
	}
	return fmt.Sprintf("offered %d of %d tools (%d of %d schema bytes): %d must-keep, the rest ranked by %s",
		got.Tools, all.Tools, got.Bytes, all.Bytes, keep, s.rankNam)
}

func (s *Selector) topK() int {
	if s.TopK <= 0 {
		return DefaultTopK
	}
	return s.TopK
}

// rank runs the ranker under the timeout. The ranker runs in its own
// goroutine, so one that ignores ctx still cannot hold the turn.
func (s *Selector) rank(ctx context.Context, input string, tools []harness.ToolSpec) ([]float64, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		scores []float64
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{err: fmt.Errorf("ranker panicked: %v", p)}
			}
			done <- o
		}()
		o.scores, o.err = s.ranker.Rank(rctx, input, tools)
	}()
	select {
	case o := <-done:
		switch {
		case o.err != nil:
			return nil, fmt.Errorf("%s ranker: %w", s.rankNam, o.err)
		case len(o.scores) != len(tools):
			return nil, fmt.Errorf("%s ranker returned %d scores for %d tools", s.rankNam, len(o.scores), len(tools))
		}
		return o.scores, nil
	case <-rctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s ranker: %w after %s", s.rankNam, errTimeout, timeout)
	}
}

var errTimeout = errors.New("timed out")

// choose marks the must-keep tools and then the best-scored others until
// topK are marked. Ties go to the tool listed first, so the choice is
// deterministic.
func choose(tools []harness.ToolSpec, scores []float64, keep map[int]bool, topK int) []bool {
	sel := make([]bool, len(tools))
	n := 0
	for i := range keep {
		sel[i] = true
		n++
	}
	order := make([]int, len(tools))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	for _, i := range order {
		if n >= topK {
			break
		}
		if !sel[i] {
			sel[i] = true
			n++
		}
	}
	return sel
}

// mustKeep returns the indexes of the tools kept whatever the ranking.
func (s *Selector) mustKeep(conv *harness.Conversation, tools []harness.ToolSpec) map[int]bool {
	patterns := s.Identity
	if patterns == nil {
		patterns = defaultIdentity()
	}
	patterns = append(append([]string(nil), patterns...), s.Pinned...)
	recent := recentlyCalled(conv, s.recentN())
	keep := map[int]bool{}
	for i, t := range tools {
		if recent[t.Name] || matchAny(patterns, t.Name) {
			keep[i] = true
		}
	}
	return keep
}

// check refuses the negative values that once meant off: read as the
// default they would silently turn a switched-off rule back on.
func (s *Selector) check() error {
	if s.Threshold < 0 {
		return fmt.Errorf("toolselect: Threshold %d is negative: 0 is the default (%d), AlwaysRank ranks every turn", s.Threshold, DefaultThreshold)
	}
	if s.StickyShare < 0 || s.StickyShare > 1 {
		return fmt.Errorf("toolselect: StickyShare %v is outside 0–1: 0 is the default (%v), NoSticky selects afresh every turn", s.StickyShare, defaultStickyShare)
	}
	if s.StickyTop < 0 {
		return fmt.Errorf("toolselect: StickyTop %d is negative: 0 is the default (%d), NoSticky selects afresh every turn", s.StickyTop, defaultStickyTop)
	}
	if s.RecentToolMessages < 0 {
		return fmt.Errorf("toolselect: RecentToolMessages %d is negative: 0 is the default (%d), NoRecentTools keeps none", s.RecentToolMessages, defaultRecentToolMessages)
	}
	return nil
}

func (s *Selector) recentN() int {
	switch {
	case s.NoRecentTools:
		return 0
	case s.RecentToolMessages == 0:
		return defaultRecentToolMessages
	}
	return s.RecentToolMessages
}

// recentlyCalled returns the tools of the conversation's last n tool
// messages (one per result), newest first.
func recentlyCalled(conv *harness.Conversation, n int) map[string]bool {
	out := map[string]bool{}
	if conv == nil || n <= 0 {
		return out
	}
	for i := len(conv.Turns) - 1; i >= 0; i-- {
		t := conv.Turns[i]
		for j := len(t.Rounds) - 1; j >= 0; j-- {
			rs := t.Rounds[j].Results
			for k := len(rs) - 1; k >= 0; k-- {
				if rs[k] == nil {
					continue
				}
				out[rs[k].Tool] = true
				if n--; n == 0 {
					return out
				}
			}
		}
	}
	return out
}

// matchAny reports whether name, or its part after a "server__"
// namespace, matches one of the glob patterns.
func matchAny(patterns []string, name string) bool {
	base := name
	if i := strings.LastIndex(name, "__"); i >= 0 {
		base = name[i+2:]
	}
	for _, p := range patterns {
		if globMatch(p, name) || (base != name && globMatch(p, base)) {
			return true
		}
	}
	return false
}

// Literal returns a pattern (for Selector.Pinned or Identity) that
// matches name only: the characters path.Match reads as a pattern are
// escaped.
func Literal(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func keepNames(tools []harness.ToolSpec, keep map[int]bool) []string {
	var names []string
	for i, t := range tools {
		if keep[i] {
			names = append(names, t.Name)
		}
	}
	return names
}

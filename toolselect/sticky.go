package toolselect

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sort"
	"sync"

	"github.com/agentharness/harness"
)

// defaultStickyTop is how many of a turn's best-scored tools a kept list
// is judged on (see Selector.StickyTop).
const defaultStickyTop = 5

// maxRankMemo bounds the rankings a Selector remembers (see rankMemo).
const maxRankMemo = 512

// Why a conversation keeps its selection from turn to turn: the tool
// schemas come first in every request (before the system prompt and the
// messages), so a turn that offers another list than the turn before
// breaks the provider's prompt cache for the whole conversation, and its
// first request pays every token of it again (Anthropic writes it at
// 1.25 ×). Reselecting every turn can cost more than offering every tool
// (docs/design.md, "Tool selection across turns"). A new list is worth
// that only when the turn needs tools the old one lacks: one of the new
// input's best-ranked tools, or a must-keep tool.

// defaultStickyShare is the share of a new selection's relevance a kept
// one must reach (see Selector.StickyShare).
const defaultStickyShare = 0.9

func (s *Selector) stickyShare() float64 {
	if s.StickyShare > 0 {
		return s.StickyShare
	}
	return defaultStickyShare
}

// stickyTop returns the number of best-ranked tools checked, 0 when the
// selection is not kept across turns.
func (s *Selector) stickyTop() int {
	switch {
	case s.NoSticky:
		return 0
	case s.StickyTop > 0:
		return s.StickyTop
	}
	return defaultStickyTop
}

// fresh is the selection a turn would make on its own: the must-keep
// tools and the best-ranked others, and the ranking it came from.
type fresh struct {
	sel    []bool
	keep   map[int]bool
	scores []float64
}

// chooseTurn returns the selection of the conversation's current turn (its
// last): the previous turn's, when that still serves this turn (holds),
// else every tool; the first turn's is its own. mode says which
// (modeRanked, modeKept, modeSettled). The previous turn's list is worked
// out again by the same rule from the start of the conversation (the
// store keeps no tool lists), from remembered rankings, up to the turn
// that settled, which every later turn keeps. With SettleStubs a settled
// list is the kept list and the settling turn's own selection, and stub
// says the other tools go as stubs instead of whole.
func (s *Selector) chooseTurn(ctx context.Context, conv *harness.Conversation, tools toolSet, now fresh) (sel []bool, mode string, stub bool, err error) {
	top := s.stickyTop()
	if top == 0 || conv == nil || len(conv.Turns) < 2 {
		return now.sel, modeRanked, false, nil
	}
	var prev []bool
	for i := 1; i < len(conv.Turns); i++ {
		before := &harness.Conversation{ID: conv.ID, Turns: conv.Turns[:i-1]}
		f, err := s.freshOf(ctx, before, conv.Turns[i-1].Input, tools)
		if err != nil {
			return nil, "", false, err
		}
		switch {
		case prev == nil:
			prev = f.sel
		case !holds(prev, f, top, s.stickyShare()):
			sel, stub := s.settle(prev, f)
			return sel, modeKept, stub, nil // settled earlier
		}
	}
	if holds(prev, now, top, s.stickyShare()) {
		return prev, modeKept, false, nil
	}
	sel, stub = s.settle(prev, now)
	return sel, modeSettled, stub, nil
}

// settle returns the list a conversation settles on when kept list prev
// does not serve the turn f was ranked for: every tool, or with
// SettleStubs prev and f's selection whole and the rest as stubs (stub).
func (s *Selector) settle(prev []bool, f fresh) (sel []bool, stub bool) {
	if !s.SettleStubs {
		return everyTool(len(prev)), false
	}
	sel = make([]bool, len(prev))
	for i := range sel {
		sel[i] = prev[i] || f.sel[i]
	}
	return sel, true
}

// holds reports whether selection sel serves the turn f was ranked for as
// well as a new list would: it offers every must-keep tool of f, and its
// top best-scored tools score at least share of what the top best-scored
// of all tools do. An input that matches no tool is served by any list.
func holds(sel []bool, f fresh, top int, share float64) bool {
	for i := range f.keep {
		if !sel[i] {
			return false
		}
	}
	order := make([]int, len(f.scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return f.scores[order[a]] > f.scores[order[b]] })
	var best, mine float64
	n := 0
	for _, i := range order[:min(top, len(order))] {
		best += max(f.scores[i], 0)
	}
	for _, i := range order {
		if n == top {
			break
		}
		if sel[i] {
			mine += max(f.scores[i], 0)
			n++
		}
	}
	return best <= 0 || mine >= share*best
}

// toolSet is the tools a Select call offers, with the digest that names
// their rankings (computed once per call: every earlier turn's selection
// is worked out again against the same tools).
type toolSet struct {
	specs  []harness.ToolSpec
	digest [32]byte
}

func newToolSet(tools []harness.ToolSpec) toolSet {
	h := sha256.New()
	for _, t := range tools {
		hashField(h, []byte(t.Name))
		hashField(h, []byte(t.Description))
		hashField(h, t.InputSchema)
	}
	set := toolSet{specs: tools}
	h.Sum(set.digest[:0])
	return set
}

// hashField writes b to h with its length, so that fields cannot run
// into each other.
func hashField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// freshOf is the selection a turn with input would make on its own after
// the turns of conv.
func (s *Selector) freshOf(ctx context.Context, conv *harness.Conversation, input string, tools toolSet) (fresh, error) {
	keep := s.mustKeep(conv, tools.specs)
	scores, err := s.rankMemo(ctx, input, tools)
	if err != nil {
		return fresh{}, err
	}
	return fresh{sel: choose(tools.specs, scores, keep, s.topK()), keep: keep, scores: scores}, nil
}

// rankMemo ranks tools for input, remembering the ranking: each turn
// works out the earlier turns' selections again, and a ranker may be a
// remote embedding call.
func (s *Selector) rankMemo(ctx context.Context, input string, tools toolSet) ([]float64, error) {
	h := sha256.New()
	h.Write(tools.digest[:])
	hashField(h, []byte(input))
	var key [32]byte
	h.Sum(key[:0])
	if scores, ok := s.memo.get(key); ok {
		return scores, nil
	}
	scores, err := s.rank(ctx, input, tools.specs)
	if err != nil {
		return nil, err
	}
	s.memo.put(key, scores)
	return scores, nil
}

// rankings remembers up to maxRankMemo rankings, forgetting the oldest.
type rankings struct {
	mu    sync.Mutex
	byKey map[[32]byte][]float64
	order [][32]byte
}

func (r *rankings) get(k [32]byte) ([]float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.byKey[k]
	return v, ok
}

func (r *rankings) put(k [32]byte, v []float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[[32]byte][]float64{}
	}
	if _, ok := r.byKey[k]; ok {
		return
	}
	if len(r.order) >= maxRankMemo {
		delete(r.byKey, r.order[0])
		r.order = r.order[1:]
	}
	r.byKey[k] = v
	r.order = append(r.order, k)
}

// The modes of a selection event: a turn's own ranking, the previous
// turn's list kept, or every tool from this turn on.
const (
	modeRanked  = "ranked"
	modeKept    = "kept"
	modeSettled = "settled"
	// modeDeferred: a later turn of a deferring selector (Selector.Defer)
	// offers the first turn's list.
	modeDeferred = "deferred"
)

// everyTool is the list a turn offers when the kept one does not serve
// it: every tool, from then on. The list changes once more, at most: a
// new selection at each change of subject would break the cached prefix
// again every time, and offering everything serves every later turn.
func everyTool(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

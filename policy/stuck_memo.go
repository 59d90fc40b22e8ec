package policy

import (
	"container/list"
	"sync"

	"github.com/agentharness/harness"
)

// stuckMemo keeps, per turn, the facts of the rounds a StuckPolicy has
// judged and its verdict after each prefix of them. A turn's rounds only
// grow, and the verdict after a prefix depends on that prefix alone, so a
// view judges only the rounds appended since the previous view: the
// policy's cost per request does not grow with the turn's length (the
// fingerprints, canonical JSON of every call, are computed once per round).
// A turn is recognised by its pointer and its rounds by theirs; when they
// differ (a conversation reloaded from a store) the verdicts are computed
// again, with the same outcome.
//
// Every view judges all of its conversation's turns (an ended turn's
// nudges are placed again), so turns are kept by conversation, and whole
// conversations are forgotten, least recently judged first, once the
// memo holds more than stuckMemoTurns turns. The conversation being judged
// is never forgotten, however many turns it has: a memo bounded by turns
// alone, LRU or cleared when full, would judge a conversation longer than
// its bound from scratch on every request (each view walks the turns in
// the same order, evicting the ones the next view needs first). Safe for
// concurrent use.
type stuckMemo struct {
	mu sync.Mutex
	// convs maps a conversation's key (convKey; for a view without a
	// conversation, its turn) to its element of order, whose value is a
	// *stuckConv. Turns are keyed by pointer within it, so conversations
	// that share an id share an entry and never each other's verdicts.
	convs map[any]*list.Element
	order list.List // most recently judged first
	turns int       // turns held across convs
	// assessed counts the round prefixes judged, for tests: a memo hit
	// judges none.
	assessed int
}

// stuckMemoTurns bounds the turns a stuckMemo keeps of the conversations
// other than the one being judged.
const stuckMemoTurns = 256

// stuckConv is one conversation's memo.
type stuckConv struct {
	key   any
	turns map[*harness.Turn]*stuckTurn
}

// stuckTurn is one turn's memo: the rounds judged (those with calls), with
// the rules they were judged by, their facts and the verdict after each.
type stuckTurn struct {
	rules    stuckRules
	rounds   []*harness.Round
	facts    []roundFacts
	verdicts []stuckVerdict
}

// verdicts returns the verdict after each prefix of rounds (the rounds
// with calls of turn, in conv when it is not nil) under rules:
// verdicts[j] judges rounds[:j+1].
func (p *StuckPolicy) verdicts(conv *harness.Conversation, turn *harness.Turn, rounds []*harness.Round, rules stuckRules) []stuckVerdict {
	if p == nil {
		var st stuckTurn
		return st.extend(rounds, rules, nil)
	}
	m := &p.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	sc := m.conversation(conv, turn)
	st := sc.turns[turn]
	if st == nil {
		st = &stuckTurn{}
		sc.turns[turn] = st
		m.turns++
		m.turns -= sc.prune(conv, turn)
		m.evict(sc)
	}
	return st.extend(rounds, rules, &m.assessed)
}

// conversation returns the memo of conv (of turn when conv is nil), new
// or found, as the most recently judged.
func (m *stuckMemo) conversation(conv *harness.Conversation, turn *harness.Turn) *stuckConv {
	var key any = turn
	if conv != nil {
		key = convKey(conv)
	}
	if e, ok := m.convs[key]; ok {
		m.order.MoveToFront(e)
		return e.Value.(*stuckConv)
	}
	if m.convs == nil {
		m.convs = map[any]*list.Element{}
	}
	sc := &stuckConv{key: key, turns: map[*harness.Turn]*stuckTurn{}}
	m.convs[key] = m.order.PushFront(sc)
	return sc
}

// evict forgets the least recently judged conversations but keep while
// the memo holds more than stuckMemoTurns turns.
func (m *stuckMemo) evict(keep *stuckConv) {
	for m.turns > stuckMemoTurns {
		e := m.order.Back()
		sc := e.Value.(*stuckConv)
		if sc == keep {
			return
		}
		m.order.Remove(e)
		delete(m.convs, sc.key)
		m.turns -= len(sc.turns)
	}
}

// prune forgets the turns that are no longer conv's (its turns were
// replaced) but for keep, and returns how many it forgot. It looks only
// when sc holds more turns than conv has, so a growing conversation costs
// nothing.
func (sc *stuckConv) prune(conv *harness.Conversation, keep *harness.Turn) int {
	if conv == nil || len(sc.turns) <= len(conv.Turns)+1 {
		return 0
	}
	live := make(map[*harness.Turn]bool, len(conv.Turns))
	for _, t := range conv.Turns {
		live[t] = true
	}
	n := 0
	for t := range sc.turns {
		if t != keep && !live[t] {
			delete(sc.turns, t)
			n++
		}
	}
	return n
}

// extend judges the rounds st has not judged yet, after dropping what no
// longer matches (other rules, other rounds), and returns the verdicts of
// rounds; assessed, when set, counts the prefixes judged.
func (st *stuckTurn) extend(rounds []*harness.Round, rules stuckRules, assessed *int) []stuckVerdict {
	k := 0
	if st.rules == rules {
		for k < len(st.rounds) && k < len(rounds) && st.rounds[k] == rounds[k] {
			k++
		}
	}
	st.rules = rules
	st.rounds, st.facts, st.verdicts = st.rounds[:k], st.facts[:k], st.verdicts[:k]
	for _, r := range rounds[k:] {
		st.rounds = append(st.rounds, r)
		st.facts = append(st.facts, newRoundFacts(r))
		st.verdicts = append(st.verdicts, rules.assess(st.facts))
		if assessed != nil {
			*assessed++
		}
	}
	return st.verdicts
}

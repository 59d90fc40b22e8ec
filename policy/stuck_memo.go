package policy

import (
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
// again, with the same outcome. At most stuckMemoTurns turns are kept.
// Safe for concurrent use.
type stuckMemo struct {
	mu    sync.Mutex
	turns map[*harness.Turn]*stuckTurn
}

// stuckMemoTurns bounds the turns a stuckMemo keeps.
const stuckMemoTurns = 256

// stuckTurn is one turn's memo: the rounds judged (those with calls), with
// the rules they were judged by, their facts and the verdict after each.
type stuckTurn struct {
	rules    stuckRules
	rounds   []*harness.Round
	facts    []roundFacts
	verdicts []stuckVerdict
}

// verdicts returns the verdict after each prefix of rounds (the turn's
// rounds with calls) under rules: verdicts[j] judges rounds[:j+1].
func (p *StuckPolicy) verdicts(turn *harness.Turn, rounds []*harness.Round, rules stuckRules) []stuckVerdict {
	if p == nil {
		var st stuckTurn
		return st.extend(rounds, rules)
	}
	m := &p.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.turns[turn]
	if st == nil {
		if m.turns == nil || len(m.turns) >= stuckMemoTurns {
			m.turns = map[*harness.Turn]*stuckTurn{}
		}
		st = &stuckTurn{}
		m.turns[turn] = st
	}
	return st.extend(rounds, rules)
}

// extend judges the rounds st has not judged yet, after dropping what no
// longer matches (other rules, other rounds), and returns the verdicts of
// rounds.
func (st *stuckTurn) extend(rounds []*harness.Round, rules stuckRules) []stuckVerdict {
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
	}
	return st.verdicts
}

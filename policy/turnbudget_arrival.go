package policy

import (
	"context"

	"github.com/agentharness/harness"
)

// applyOnArrival is the OnArrival rule over every turn of v: each round's
// results share what their turn had left when they arrived (Arrive's
// rule), in round order, except the round still open — the newest of the
// turn being answered in a request with tools, which the model reads
// whole to choose its next call, or the newest of an ended turn whose last
// request had tools and so showed it whole.
//
// A share depends only on the sizes of its turn's results up to its own
// round, so it comes out the same in every later request: the view is
// rebuilt from the transcript each time and repeats it byte for byte.
func (cfg *TurnBudget) applyOnArrival(ctx context.Context, v *harness.View, ms measure) error {
	ev := resultsOf(v, ms, inTurns)
	gs := roundsOf(v, ev)
	open := openRounds(v, gs)
	spent := map[int]int{} // per turn: what its decided rounds show
	var now shares
	for _, g := range gs {
		if g.round == open[g.turn] || g.round > cfg.Rounds {
			continue
		}
		// A share is new in this request when its round was open in the
		// previous one (the newest, or in a final request the newest two
		// rounds): only those are reported.
		loud := g.turn == v.Turn.Index && g.round >= v.Round-2
		s, err := cfg.arrive(ctx, v, ev, g.ks, spent[g.turn], ms, loud)
		if err != nil {
			return err
		}
		spent[g.turn] += s.after
		if loud {
			now = shares{before: now.before + s.before, after: now.after + s.after, trimmed: now.trimmed + s.trimmed,
				results: now.results + s.results, limit: s.limit}
		}
	}
	cfg.report(ctx, v, now, ms)
	return nil
}

// roundGroup is one round's results: positions into a turnResults.
type roundGroup struct {
	turn, round int
	ks          []int
}

// roundsOf groups ev's results by turn and round, in view order (BuildView
// puts a round's results together, after its assistant message).
func roundsOf(v *harness.View, ev turnResults) []roundGroup {
	var gs []roundGroup
	for k, i := range ev.idx {
		o := v.Origins[i]
		if n := len(gs); n > 0 && gs[n-1].turn == o.Turn && gs[n-1].round == o.Round {
			gs[n-1].ks = append(gs[n-1].ks, k)
			continue
		}
		gs = append(gs, roundGroup{turn: o.Turn, round: o.Round, ks: []int{k}})
	}
	return gs
}

// openRounds says which round of each turn v shows whole: the newest
// round with results, unless the request that follows it had tools
// withheld (v itself is final, or an ended turn's last round was final).
func openRounds(v *harness.View, gs []roundGroup) map[int]int {
	open := map[int]int{}
	for _, g := range gs {
		open[g.turn] = max(open[g.turn], g.round)
	}
	for turn := range open {
		switch t := turnOf(v, turn); {
		case turn == v.Turn.Index && v.Final:
			open[turn] = 0
		case turn != v.Turn.Index && t != nil && len(t.Rounds) > 0 && t.Rounds[len(t.Rounds)-1].Final:
			open[turn] = 0
		}
	}
	return open
}

// turnOf finds turn index in v's conversation (nil when it has none).
func turnOf(v *harness.View, index int) *harness.Turn {
	if v.Conversation == nil {
		return nil
	}
	for _, t := range v.Conversation.Turns {
		if t.Index == index {
			return t
		}
	}
	return nil
}

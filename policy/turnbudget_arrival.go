package policy

import (
	"context"
	"slices"

	"github.com/agentharness/harness"
)

// applyOnArrival is the OnArrival rule over every turn of v: each round's
// results share what their turn had left when they arrived (Arrive's
// rule) less the room the rounds after them need (reserve), in round
// order, adjusted so that the rewrite repays (repaidShares), except the
// round still open — the newest of the turn being answered in a request
// with tools, which the model reads whole to choose its next call, or the
// newest of an ended turn whose last request had tools and so showed it
// whole.
//
// A share depends only on the sizes of its turn's results up to the round
// after its own, all known in the request that first decides it, so it
// comes out the same in every later request: the view is rebuilt from the
// transcript each time and repeats it byte for byte.
func (cfg *TurnBudget) applyOnArrival(ctx context.Context, v *harness.View, ms measure) error {
	ev := resultsOf(v, ms, inTurns)
	gs := roundsOf(v, ev)
	open := openRounds(v, gs)
	spent := map[int]int{} // per turn: what its decided rounds show
	var now shares
	for j, g := range gs {
		if g.round == open[g.turn] || g.round > cfg.Rounds {
			continue
		}
		// A share is new in this request when its round was open in the
		// previous one (the newest, or in a final request the newest two
		// rounds): only those are reported.
		loud := g.turn == v.Turn.Index && g.round >= v.Round-2
		s, err := cfg.arrive(ctx, v, ev, g.ks, spent[g.turn]+cfg.reserve(ev, gs, j), ms, loud, true)
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

// reserve is what the share of round gs[j] leaves for the rounds after
// it, so that the requests up to the turn's round limit stay within the
// budget: the round after it whole (the newest when gs[j]'s share is
// decided, read whole to choose the next call), and the floor for each
// later round that will be an older round of a request with tools (round
// Rounds-1 is the newest of the last such request). It depends only on
// the sizes of gs[j]'s turn up to the round after it, which every later
// request shows the same, so the share repeats byte for byte.
func (cfg *TurnBudget) reserve(ev turnResults, gs []roundGroup, j int) int {
	g := gs[j]
	r := cfg.MinKeep * max(0, cfg.Rounds-2-g.round)
	if j+1 < len(gs) && gs[j+1].turn == g.turn && gs[j+1].round == g.round+1 {
		for _, k := range gs[j+1].ks {
			r += ev.sizes[k]
		}
	}
	return r
}

// arrivalPayback is the number of later requests within which an OnArrival
// trim must repay the rewrite it costs.
const arrivalPayback = 3

// repaidShares adjusts the water-filled shares kept of one round's
// results (sizes, in view order), already sent whole and sharing left, so
// that the round's rewrite repays itself within arrivalPayback requests
// under every default price model (defaultCompactPrices; see repays).
// Each share that does not repay on its own drops to the floor (or, when
// even that does not, the result stays whole); then, in view order, as
// many of the dropped results as the slack of left allows are shown whole
// instead (the earlier a whole result, the more of the round stays in the
// cached prefix). When the round's rewrite as a whole still does not repay
// (the results after a trimmed one are re-sent too), every result the
// water-fill trimmed goes to the floor, and when that does not repay
// either the round stays whole: the budget then yields to the cost of
// keeping it.
func repaidShares(sizes, kept []int, left, floor int) []int {
	out := slices.Clone(kept)
	var dropped []int
	for j, size := range sizes {
		if out[j] >= size || repays(sizes[j:j+1], out[j:j+1]) {
			continue
		}
		if floor < out[j] && repays(sizes[j:j+1], []int{floor}) {
			out[j] = floor
			dropped = append(dropped, j)
		} else {
			out[j] = size
		}
	}
	slack := left
	for _, k := range out {
		slack -= k
	}
	for _, j := range dropped {
		if grow := sizes[j] - out[j]; grow <= slack {
			out[j], slack = sizes[j], slack-grow
		}
	}
	if repays(sizes, out) {
		return out
	}
	for j, size := range sizes {
		if kept[j] < size && floor < size {
			out[j] = floor // the water-fill keeps at least the floor of such a result
		}
	}
	if repays(sizes, out) {
		return out
	}
	return slices.Clone(sizes)
}

// repays reports whether showing results of sizes (one round's, in view
// order, all sent whole before) at kept pays for itself within
// arrivalPayback later requests under every default price. The rewrite
// sends every result from the first trimmed one on outside the cached
// prefix (written, at Uncached) instead of reading it whole from the cache
// (Cached); each later request reads the trimmed copies instead of the
// whole ones.
func repays(sizes, kept []int) bool {
	first := -1
	for j := range sizes {
		if kept[j] < sizes[j] {
			first = j
			break
		}
	}
	if first < 0 {
		return true
	}
	for _, p := range defaultCompactPrices() {
		var cost, saved float64
		for j := first; j < len(sizes); j++ {
			cost += p.Uncached*float64(kept[j]) - p.Cached*float64(sizes[j])
			saved += p.Cached * float64(sizes[j]-kept[j])
		}
		if cost > arrivalPayback*saved {
			return false
		}
	}
	return true
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

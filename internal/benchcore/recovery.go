package benchcore

import (
	"slices"

	"github.com/agentharness/harness/replay"
)

// withRecovery returns the requests of a replay with its recovery rounds
// (replay.Report.Recoveries) priced in, as a live agent would have sent
// them. A round before request k is one more request: k's prefix as it
// was (the same input, the same cached part), the round's calls as
// output. Request k then carries the round's calls and results (Added
// tokens) on top of that prefix, which is cached whole: the round's
// request wrote it just before. Every later request carries them too, in
// its cached part when its cached prefix reached past where the round was
// inserted (its recorded Cached ≥ k's Input), else in its uncached part:
// a request that broke the cache before that point reads them again.
// Rounds inserted earlier add their tokens to the rounds after them the
// same way. calls is not modified.
func withRecovery(calls []replay.CallStat, rounds []replay.Recovery) []replay.CallStat {
	if len(rounds) == 0 {
		return calls
	}
	out := make([]replay.CallStat, 0, len(calls)+len(rounds))
	next := 0
	for k, c := range calls {
		added, cached := 0, 0
		for _, r := range rounds[:next] {
			added += r.Added
			if c.Cached >= calls[r.At].Input && r.At < k {
				cached += r.Added
			}
		}
		if next < len(rounds) && rounds[next].At == k {
			round := c
			round.Index, round.Output, round.Final, round.Stopped, round.Shown = 0, 0, false, false, nil
			round.Input, round.Cached = c.Input+added, c.Cached+cached
			for ; next < len(rounds) && rounds[next].At == k; next++ {
				round.Output += rounds[next].Output
				added += rounds[next].Added
			}
			out = append(out, round)
			c.Cached = round.Input // the round's request was just written
		} else {
			c.Cached += cached
		}
		c.Input += added
		out = append(out, c)
	}
	return out
}

// hiddenUnderNone is the set of needles none's replay (keeping every
// result whole) does not show at their use: the recording's own doing
// (its agent never had them in view), which no preset is charged for.
func hiddenUnderNone(none *replay.Report) map[string]bool {
	hidden := map[string]bool{}
	for _, r := range none.Recoveries {
		for _, n := range r.Needles {
			hidden[n] = true
		}
	}
	for _, n := range none.Unrecovered {
		hidden[n] = true
	}
	return hidden
}

// addRecovery adds a replay's recovery rounds to f, leaving out the
// needles of hidden (see hiddenUnderNone) and a round that brings back
// only such needles: their count, the needles no read-only path brings
// back, and the cost of the requests with the rounds priced in under
// every price model.
func (f *Figures) addRecovery(r *replay.Report, hidden map[string]bool) {
	var rounds []replay.Recovery
	for _, rc := range r.Recoveries {
		if slices.ContainsFunc(rc.Needles, func(n string) bool { return !hidden[n] }) {
			rounds = append(rounds, rc)
		}
	}
	for _, n := range r.Unrecovered {
		if !hidden[n] {
			f.LostNeedles++
		}
	}
	f.RecoveryRounds += len(rounds)
	if f.CostsWithRecovery == nil {
		f.CostsWithRecovery = map[string]float64{}
	}
	calls := withRecovery(r.Calls, rounds)
	for _, p := range Pricings() {
		for _, c := range calls {
			f.CostsWithRecovery[p.Name] += p.Cost(c)
		}
	}
}

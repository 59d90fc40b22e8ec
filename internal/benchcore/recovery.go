package benchcore

import (
	"slices"

	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/internal/replayengine"
)

// withRecovery returns the requests of a replay with its recovery rounds
// (replayengine.Report.Recoveries) priced in, as a live agent would have sent
// them. A round before request k is one more request: k's prefix as it
// was (the same input, the same cached part), the round's calls as
// output. Request k then carries the round's calls and results (Added
// tokens) on top of that prefix, which is cached whole: the round's
// request wrote it just before. Every later request carries them too, in
// its cached part when its cached prefix reached the round's place (the
// end of k's messages: every token of k but the request's own priming,
// which no later request caches), else in its uncached part: a request
// that broke the cache before that point (a cold cache among them) reads
// them again, and the round then sits, for the requests after it, just
// past where that break was (the earliest it can be). From the request
// whose view cleared the round (Recovery.Cleared) on, it carries what the
// clear left (Kept) instead. Rounds inserted earlier add their tokens to
// the rounds after them the same way. A round the replay sent
// (Recovery.Sent) is a request of calls already, and in the later ones: it
// adds nothing. calls is not modified.
func withRecovery(calls []replayengine.CallStat, rounds []replayengine.Recovery) []replayengine.CallStat {
	rounds = slices.DeleteFunc(slices.Clone(rounds), func(r replayengine.Recovery) bool { return r.Sent })
	if len(rounds) == 0 {
		return calls
	}
	out := make([]replayengine.CallStat, 0, len(calls)+len(rounds))
	// place[i] is where round i sits in the requests without the rounds:
	// the tokens of the messages before it.
	place := make([]int, len(rounds))
	next := 0
	for k, c := range calls {
		added, cached := 0, 0
		for i, r := range rounds[:next] {
			n := carried(r, k)
			added += n
			if c.Cached >= place[i] {
				cached += n
			} else {
				// The message that broke the cache lies before the round.
				place[i] = c.Cached + 1
			}
		}
		if next < len(rounds) && rounds[next].At == k {
			round := c
			round.Index, round.Output, round.Final, round.Stopped, round.Shown = 0, 0, false, false, nil
			round.Input, round.Cached = c.Input+added, c.Cached+cached
			for ; next < len(rounds) && rounds[next].At == k; next++ {
				round.Output += rounds[next].Output
				added += rounds[next].Added
				place[next] = c.Input - promptunit.RequestOverhead
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

// carried is the tokens round r adds to request k: all of them, or once
// the preset has cleared the round (Recovery.Cleared) what a clear leaves.
func carried(r replayengine.Recovery, k int) int {
	if r.Cleared > 0 && k >= r.Cleared {
		return r.Kept
	}
	return r.Added
}

// hiddenUnderNone is the set of needles none's replay (keeping every
// result whole) does not show at their use: the recording's own doing
// (its agent never had them in view), which no preset is charged for.
func hiddenUnderNone(none *replayengine.Report) map[string]bool {
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

// chargedRounds is r's recovery rounds that bring back a needle not in
// hidden (see hiddenUnderNone).
func chargedRounds(r *replayengine.Report, hidden map[string]bool) []replayengine.Recovery {
	var rounds []replayengine.Recovery
	for _, rc := range r.Recoveries {
		if slices.ContainsFunc(rc.Needles, func(n string) bool { return !hidden[n] }) {
			rounds = append(rounds, rc)
		}
	}
	return rounds
}

// RecoveryPriced returns the requests of preset's replay with the
// recovery rounds it is charged for (those that bring back a needle none's
// replay of the same recording shows) priced in as the bench prices them
// (withRecovery), and those rounds: for a diagnosis request by request.
func RecoveryPriced(preset, none *replayengine.Report) ([]replayengine.CallStat, []replayengine.Recovery) {
	rounds := chargedRounds(preset, hiddenUnderNone(none))
	return withRecovery(preset.Calls, rounds), rounds
}

// addRecovery adds a replay's recovery rounds to f, leaving out the
// needles of hidden (see hiddenUnderNone) and a round that brings back
// only such needles: their count, the needles no read-only path brings
// back, and the cost of the requests with the rounds priced in under
// every price model.
func (f *Figures) addRecovery(r *replayengine.Report, hidden map[string]bool) {
	rounds := chargedRounds(r, hidden)
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

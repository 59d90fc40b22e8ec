package benchcore

import (
	"fmt"
	"testing"

	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/internal/replayengine"
)

// TestWithRecovery: a recovery round is one more request of the prefix
// before the request it precedes (its input and cached part), its calls
// the output; that request then carries the round's tokens cached whole,
// and every later one carries them, cached when its cached prefix reached
// past the round, uncached when it broke the cache before it.
func TestWithRecovery(t *testing.T) {
	type cs = replayengine.CallStat
	calls := []cs{
		{Index: 1, Input: 100, Cached: 0, Output: 10},
		{Index: 2, Input: 200, Cached: 100, Output: 10},
		{Index: 3, Input: 300, Cached: 200, Output: 10},
		{Index: 4, Input: 250, Cached: 50, Output: 10}, // a break before the round's place
	}
	for _, c := range []struct {
		name   string
		rounds []replayengine.Recovery
		want   []cs
	}{
		{"no round", nil, calls},
		{"one round before request 2", []replayengine.Recovery{{At: 1, Output: 7, Added: 40}}, []cs{
			{Index: 1, Input: 100, Cached: 0, Output: 10},
			{Index: 0, Input: 200, Cached: 100, Output: 7},
			{Index: 2, Input: 240, Cached: 200, Output: 10},
			{Index: 3, Input: 340, Cached: 240, Output: 10},
			{Index: 4, Input: 290, Cached: 50, Output: 10},
		}},
		{"two rounds", []replayengine.Recovery{{At: 1, Output: 7, Added: 40}, {At: 2, Output: 5, Added: 20}}, []cs{
			{Index: 1, Input: 100, Cached: 0, Output: 10},
			{Index: 0, Input: 200, Cached: 100, Output: 7},
			{Index: 2, Input: 240, Cached: 200, Output: 10},
			{Index: 0, Input: 340, Cached: 240, Output: 5},
			{Index: 3, Input: 360, Cached: 340, Output: 10},
			{Index: 4, Input: 310, Cached: 50, Output: 10},
		}},
		// A sent round is a request of calls already (its Index 0) and in
		// the requests after it: it adds nothing; an unsent one after it
		// is priced as before.
		{"a sent round", []replayengine.Recovery{{At: 1, Output: 7, Added: 40, Sent: true}}, calls},
		{"a sent round, then an unsent one", []replayengine.Recovery{{At: 1, Output: 7, Added: 40, Sent: true}, {At: 2, Output: 5, Added: 20}}, []cs{
			{Index: 1, Input: 100, Cached: 0, Output: 10},
			{Index: 2, Input: 200, Cached: 100, Output: 10},
			{Index: 0, Input: 300, Cached: 200, Output: 5},
			{Index: 3, Input: 320, Cached: 300, Output: 10},
			{Index: 4, Input: 270, Cached: 50, Output: 10},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := withRecovery(calls, c.rounds)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestWithRecoveryCachesTheRoundAfterIt: as the prompt-cache model counts
// them, a request's cached prefix is the previous request's input less its
// priming (promptunit.RequestOverhead), never all of it. The request after
// the round's carries the round cached, and so does the one after a
// request that broke the cache before the round (a compaction that made
// every later request shorter than the one the round preceded), and a
// request whose cache went cold caches nothing, the round included.
func TestWithRecoveryCachesTheRoundAfterIt(t *testing.T) {
	type cs = replayengine.CallStat
	o := promptunit.RequestOverhead
	calls := []cs{
		{Index: 1, Input: 100, Cached: 0, Output: 10},
		{Index: 2, Input: 200, Cached: 100 - o, Output: 10},
		{Index: 3, Input: 300, Cached: 200 - o, Output: 10},
		{Index: 4, Input: 150, Cached: 0, Output: 10}, // a break before the round, at the first message
		{Index: 5, Input: 250, Cached: 150 - o, Output: 10},
		{Index: 6, Input: 260, Cached: 0, Output: 10}, // the cache gone cold
		{Index: 7, Input: 270, Cached: 260 - o, Output: 10},
	}
	for _, c := range []struct {
		name   string
		rounds []replayengine.Recovery
		want   []cs
	}{
		{"one round before request 2", []replayengine.Recovery{{At: 1, Output: 7, Added: 40}}, []cs{
			{Index: 1, Input: 100, Cached: 0, Output: 10},
			{Index: 0, Input: 200, Cached: 100 - o, Output: 7},
			{Index: 2, Input: 240, Cached: 200, Output: 10},
			{Index: 3, Input: 340, Cached: 200 - o + 40, Output: 10},
			{Index: 4, Input: 190, Cached: 0, Output: 10},
			{Index: 5, Input: 290, Cached: 150 - o + 40, Output: 10},
			{Index: 6, Input: 300, Cached: 0, Output: 10},
			{Index: 7, Input: 310, Cached: 260 - o + 40, Output: 10},
		}},
		{"a round after the break", []replayengine.Recovery{{At: 4, Output: 7, Added: 40}}, []cs{
			{Index: 1, Input: 100, Cached: 0, Output: 10},
			{Index: 2, Input: 200, Cached: 100 - o, Output: 10},
			{Index: 3, Input: 300, Cached: 200 - o, Output: 10},
			{Index: 4, Input: 150, Cached: 0, Output: 10},
			{Index: 0, Input: 250, Cached: 150 - o, Output: 7},
			{Index: 5, Input: 290, Cached: 250, Output: 10},
			{Index: 6, Input: 300, Cached: 0, Output: 10},
			{Index: 7, Input: 310, Cached: 260 - o + 40, Output: 10},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := withRecovery(calls, c.rounds)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestRecoveryFigures: a preset whose needles all stay visible costs the
// same with re-reads priced; one that hides them pays more, and a needle
// nothing brings back counts as lost, but for a needle none does not show
// either (the recording's doing), which is not charged.
func TestRecoveryFigures(t *testing.T) {
	calls := []replayengine.CallStat{{Index: 1, Input: 100, Output: 10}, {Index: 2, Input: 200, Cached: 100, Output: 10}}
	var none, cut Figures
	noneRep := &replayengine.Report{Calls: calls, Unrecovered: []string{"seen_by_none"}}
	cutRep := &replayengine.Report{Calls: calls, Recoveries: []replayengine.Recovery{{At: 1, Output: 7, Added: 40, Needles: []string{"needle_1"}}, {At: 1, Output: 7, Added: 40, Needles: []string{"seen_by_none"}}},
		Unrecovered: []string{"needle_2", "needle_3", "seen_by_none"}}
	hidden := hiddenUnderNone(noneRep)
	none.add(noneRep)
	none.addRecovery(noneRep, hidden)
	cut.add(cutRep)
	cut.addRecovery(cutRep, hidden)
	none.finish(none.Effective, none.Costs)
	cut.finish(none.Effective, none.Costs)
	for _, p := range Pricings() {
		if none.RatiosWithRecovery[p.Name] != 1 || none.LostNeedles != 0 || none.RecoveryRounds != 0 {
			t.Errorf("%s: none %v with re-reads, %d lost", p.Name, none.RatiosWithRecovery[p.Name], none.LostNeedles)
		}
		if cut.Ratios[p.Name] != 1 || cut.RatiosWithRecovery[p.Name] <= 1 {
			t.Errorf("%s: cut %v, %v with re-reads: the round must be priced", p.Name, cut.Ratios[p.Name], cut.RatiosWithRecovery[p.Name])
		}
	}
	if cut.LostNeedles != 2 || cut.RecoveryRounds != 1 {
		t.Errorf("cut: %d lost, %d rounds", cut.LostNeedles, cut.RecoveryRounds)
	}
}

// TestWithRecoveryClearedRound: from the request whose view cleared a
// round (Recovery.Cleared), the round adds what the clear left (Kept),
// not its pages.
func TestWithRecoveryClearedRound(t *testing.T) {
	type cs = replayengine.CallStat
	o := promptunit.RequestOverhead
	calls := []cs{
		{Index: 1, Input: 100, Cached: 0, Output: 10},
		{Index: 2, Input: 200, Cached: 100 - o, Output: 10},
		{Index: 3, Input: 300, Cached: 200 - o, Output: 10},
		{Index: 4, Input: 150, Cached: 50, Output: 10}, // the clear: a break before the round
		{Index: 5, Input: 250, Cached: 150 - o, Output: 10},
	}
	got := withRecovery(calls, []replayengine.Recovery{{At: 1, Output: 7, Added: 40, Cleared: 3, Kept: 12}})
	want := []cs{
		{Index: 1, Input: 100, Cached: 0, Output: 10},
		{Index: 0, Input: 200, Cached: 100 - o, Output: 7},
		{Index: 2, Input: 240, Cached: 200, Output: 10},
		{Index: 3, Input: 340, Cached: 200 - o + 40, Output: 10},
		{Index: 4, Input: 162, Cached: 50, Output: 10},
		{Index: 5, Input: 262, Cached: 150 - o + 12, Output: 10},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

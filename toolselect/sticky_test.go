package toolselect_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/toolselect"
)

// stickyRun plays convs conversations of turns requests each, drawn from
// cases: each turn asks one case's request, and the agent calls the
// case's expected tools that were offered. It returns the share of
// expected tools offered, the number of later turns (after each
// conversation's first) and of those whose list differed from the turn
// before, and the mean number of tools offered.
func stickyRun(t *testing.T, sel *toolselect.Selector, specs []harness.ToolSpec, cases []rankingCase, convs, turns int) (recall float64, later, changes int, offered float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	found, wanted, sum := 0, 0, 0
	for c := range convs {
		conv := harness.NewConversation(fmt.Sprintf("conv-%d", c))
		var prev []string
		for k := range turns {
			cs := cases[rng.IntN(len(cases))]
			turn := &harness.Turn{Index: k + 1, Input: cs.Request}
			conv.Turns = append(conv.Turns, turn)
			got, err := sel.Select(context.Background(), conv, cs.Request, specs)
			if err != nil {
				t.Fatal(err)
			}
			now := names(got)
			sum += len(now)
			if k > 0 {
				later++
				if !slices.Equal(now, prev) {
					changes++
				}
			}
			prev = now
			round := &harness.Round{Index: 1}
			for _, want := range cs.Expect {
				wanted++
				if slices.Contains(now, want) {
					found++
					round.Results = append(round.Results, &harness.ToolResult{CallID: fmt.Sprintf("c%d", wanted), Tool: want})
				}
			}
			turn.Rounds = append(turn.Rounds, round)
		}
	}
	return float64(found) / float64(wanted), later, changes, float64(sum) / float64(convs*turns)
}

// TestStickyAcrossTurns: conversations of 8 turns, each turn a request of
// the ranking tables drawn at random (a change of subject every turn, the
// hardest case for keeping a list). Selecting afresh offers every needed
// tool but changes the list, and so breaks the prompt cache, on almost
// every turn; the sticky default offers every needed tool too and changes
// the list at most once per conversation after its first turn.
func TestStickyAcrossTurns(t *testing.T) {
	specs := loadSpecs(t)
	const convs, turns = 40, 8
	for _, file := range []string{"ranking_cases.json", "ranking_heldout.json"} {
		cases := loadCases(t, file)
		fr, later, fch, fo := stickyRun(t, &toolselect.Selector{NoSticky: true}, specs, cases, convs, turns)
		sr, _, sch, so := stickyRun(t, &toolselect.Selector{}, specs, cases, convs, turns)
		t.Logf("%s, %d conversations × %d turns: afresh recall %.3f, %d of %d later turns change the list, %.1f tools offered; sticky recall %.3f, %d changes, %.1f tools",
			file, convs, turns, fr, fch, later, fo, sr, sch, so)
		if sr < fr {
			t.Errorf("%s: sticky recall %.3f below afresh %.3f", file, sr, fr)
		}
		if sch > convs {
			t.Errorf("%s: the list changed on %d later turns, more than once per conversation (%d)", file, sch, convs)
		}
		if fch < later/2 {
			t.Errorf("%s: afresh changed the list on only %d of %d later turns: the test no longer exercises keeping", file, fch, later)
		}
	}
}

// TestStickyKeepsAndSettles: a follow-up on the same subject keeps the
// first turn's list (event mode "kept"); a turn whose best tools are not
// in it offers every tool, and so does the turn after; NoSticky selects
// afresh.
func TestStickyKeepsAndSettles(t *testing.T) {
	specs := loadSpecs(t)
	inputs := []string{
		"Which of my published posts haven't mentioned the dark mode feature yet?",
		"And which of those posts got the most comments?",
		"Refund the last invoice of customer 4411",
		"Thanks. Anything else on the blog?",
	}
	run := func(sel *toolselect.Selector) (lists [][]string, modes []string) {
		var ev events
		conv := harness.NewConversation("c")
		for i, in := range inputs {
			conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
			got, err := sel.Select(ev.ctx(), conv, in, specs)
			if err != nil {
				t.Fatal(err)
			}
			lists = append(lists, names(got))
			modes = append(modes, fmt.Sprint(ev.last(t).Data["mode"]))
		}
		return lists, modes
	}
	lists, modes := run(&toolselect.Selector{})
	if len(lists[0]) != toolselect.DefaultTopK || !slices.Equal(lists[1], lists[0]) || modes[1] != "kept" {
		t.Errorf("turn 2 (same subject): %d tools, same as turn 1 %v, mode %s; want the first turn's %d kept", len(lists[1]), slices.Equal(lists[1], lists[0]), modes[1], toolselect.DefaultTopK)
	}
	if len(lists[2]) != len(specs) || len(lists[3]) != len(specs) || modes[3] != "kept" {
		t.Errorf("turns 3 and 4 offered %d and %d tools (mode %s); want all %d from the change of subject on", len(lists[2]), len(lists[3]), modes[3], len(specs))
	}
	if !slices.Contains(lists[2], "list_invoices") {
		t.Errorf("turn 3 does not offer list_invoices: %v", lists[2])
	}
	afresh, _ := run(&toolselect.Selector{NoSticky: true})
	for i, l := range afresh {
		if len(l) != toolselect.DefaultTopK {
			t.Errorf("NoSticky turn %d offered %d tools, want a selection of %d", i+1, len(l), toolselect.DefaultTopK)
		}
	}
	if slices.Equal(afresh[2], afresh[0]) {
		t.Error("NoSticky turn 3 offered turn 1's list")
	}
}

// TestStickyBadSettings: out-of-range settings are errors naming the switch.
func TestStickyBadSettings(t *testing.T) {
	for _, tc := range []struct {
		sel  *toolselect.Selector
		want string
	}{
		{&toolselect.Selector{StickyTop: -1}, "StickyTop -1 is negative"},
		{&toolselect.Selector{StickyShare: 1.5}, "StickyShare 1.5 is outside 0–1"},
		{&toolselect.Selector{StickyShare: -0.1}, "NoSticky selects afresh"},
	} {
		_, err := tc.sel.Select(context.Background(), harness.NewConversation("c"), "x", manyTools(30))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.sel, err, tc.want)
		}
	}
}

// BenchmarkSelectLongConversation measures the selection of turn 200 of a
// conversation over the 84-tool fixture that keeps one subject (so its
// list is kept, never settled: the most work): the earlier turns' lists
// are worked out again from remembered rankings (the first iteration
// ranks them). Compare with NoSticky, which ranks the one turn.
func BenchmarkSelectLongConversation(b *testing.B) {
	specs := loadSpecs(b)
	cases := loadCases(b, "ranking_cases.json")
	conv := harness.NewConversation("long")
	for i := range 200 {
		c := cases[0]
		conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: c.Request,
			Rounds: []*harness.Round{{Index: 1, Results: []*harness.ToolResult{{CallID: fmt.Sprint(i), Tool: c.Expect[0]}}}}})
	}
	last := conv.Turns[len(conv.Turns)-1]
	last.Rounds = nil
	if got, err := (&toolselect.Selector{}).Select(context.Background(), conv, last.Input, specs); err != nil || len(got) != toolselect.DefaultTopK {
		b.Fatalf("turn 200 offers %d tools (%v), want the kept selection of %d", len(got), err, toolselect.DefaultTopK)
	}
	for _, tc := range []struct {
		name string
		sel  *toolselect.Selector
	}{{"sticky", &toolselect.Selector{}}, {"afresh", &toolselect.Selector{NoSticky: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.sel.Select(context.Background(), conv, last.Input, specs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

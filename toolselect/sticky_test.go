package toolselect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// stickyRun plays convs conversations of turns requests each, drawn from
// cases: each turn asks one case's request, and the agent calls the
// case's expected tools that were offered. It returns the share of
// expected tools offered, the number of later turns (after each
// conversation's first) and of those whose list differed from the turn
// before, and the mean number of tools offered.
func stickyRun(t *testing.T, sel *Selector, specs []harness.ToolSpec, cases []rankingCase, convs, turns int) (recall float64, later, changes int, offered float64) {
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
		fr, later, fch, fo := stickyRun(t, &Selector{NoSticky: true}, specs, cases, convs, turns)
		sr, _, sch, so := stickyRun(t, &Selector{}, specs, cases, convs, turns)
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
	run := func(sel *Selector) (lists [][]string, modes []string) {
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
	lists, modes := run(&Selector{})
	if len(lists[0]) != DefaultTopK || !slices.Equal(lists[1], lists[0]) || modes[1] != "kept" {
		t.Errorf("turn 2 (same subject): %d tools, same as turn 1 %v, mode %s; want the first turn's %d kept", len(lists[1]), slices.Equal(lists[1], lists[0]), modes[1], DefaultTopK)
	}
	if len(lists[2]) != len(specs) || len(lists[3]) != len(specs) || modes[3] != "kept" {
		t.Errorf("turns 3 and 4 offered %d and %d tools (mode %s); want all %d from the change of subject on", len(lists[2]), len(lists[3]), modes[3], len(specs))
	}
	if !slices.Contains(lists[2], "list_invoices") {
		t.Errorf("turn 3 does not offer list_invoices: %v", lists[2])
	}
	afresh, _ := run(&Selector{NoSticky: true})
	for i, l := range afresh {
		if len(l) != DefaultTopK {
			t.Errorf("NoSticky turn %d offered %d tools, want a selection of %d", i+1, len(l), DefaultTopK)
		}
	}
	if slices.Equal(afresh[2], afresh[0]) {
		t.Error("NoSticky turn 3 offered turn 1's list")
	}
}

// TestSettleStubs: with SettleStubs the change of subject of
// TestStickyKeepsAndSettles offers every tool still, but only the first
// turn's list and the new turn's selection whole, the rest as stubs, and
// the turn after offers the same bytes (mode "kept"); before the change
// the lists are the default's.
func TestSettleStubs(t *testing.T) {
	specs := loadSpecs(t)
	full := map[string]harness.ToolSpec{}
	for _, s := range specs {
		full[s.Name] = s
	}
	inputs := []string{
		"Which of my published posts haven't mentioned the dark mode feature yet?",
		"And which of those posts got the most comments?",
		"Refund the last invoice of customer 4411",
		"Thanks. Anything else on the blog?",
	}
	conv, plain := harness.NewConversation("c"), harness.NewConversation("p")
	sel := &Selector{SettleStubs: true}
	var ev events
	var lists [][]harness.ToolSpec
	for i, in := range inputs {
		conv.Turns = append(conv.Turns, &harness.Turn{Index: i + 1, Input: in})
		plain.Turns = append(plain.Turns, &harness.Turn{Index: i + 1, Input: in})
		got, err := sel.Select(ev.ctx(), conv, in, specs)
		if err != nil {
			t.Fatal(err)
		}
		def, err := (&Selector{}).Select(context.Background(), plain, in, specs)
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 && !reflect.DeepEqual(got, def) {
			t.Errorf("turn %d: %v, want the default's %v before the change of subject", i+1, names(got), names(def))
		}
		lists = append(lists, got)
		if mode := fmt.Sprint(ev.last(t).Data["mode"]); i >= 2 && mode != []string{"settled", "kept"}[i-2] {
			t.Errorf("turn %d: mode %s", i+1, mode)
		}
	}
	settled := lists[2]
	if len(settled) != len(specs) || !reflect.DeepEqual(lists[3], settled) {
		t.Fatalf("turns 3 and 4 offered %d and %d tools (the same: %v); want all %d, the same bytes", len(settled), len(lists[3]), reflect.DeepEqual(lists[3], settled), len(specs))
	}
	whole := map[string]bool{}
	for _, tl := range settled {
		switch {
		case reflect.DeepEqual(tl, full[tl.Name]):
			whole[tl.Name] = true
		case !reflect.DeepEqual(tl, Stub(full[tl.Name])):
			t.Errorf("turn 3 offers %s neither whole nor as its stub: %+v", tl.Name, tl)
		}
	}
	for _, n := range append(names(lists[0]), "list_invoices") {
		if !whole[n] {
			t.Errorf("turn 3 offers %s as a stub: want the first turn's list and the new turn's selection whole", n)
		}
	}
	if len(whole) >= len(specs) || len(whole) > 2*DefaultTopK {
		t.Errorf("turn 3 offers %d of %d tools whole: want the two selections' union, the rest stubs", len(whole), len(specs))
	}
}

// TestSettleStubsRisk measures what SettleStubs risks: a call, after the
// list settled, of a tool it offers only as a stub (one more round for a
// live model, to learn the schema). Conversations of 2 to 8 turns, each
// turn a request of the ranking tables drawn at random (a change of
// subject every turn, the worst case). With one change of subject the
// settling turn's own tools are whole, so no call meets a stub; every
// later change can.
func TestSettleStubsRisk(t *testing.T) {
	specs := loadSpecs(t)
	full := map[string]harness.ToolSpec{}
	for _, s := range specs {
		full[s.Name] = s
	}
	all := Measure(specs).Bytes
	for _, file := range []string{"ranking_cases.json", "ranking_heldout.json"} {
		cases := loadCases(t, file)
		for _, turns := range []int{2, 3, 4, 8} {
			rng := rand.New(rand.NewPCG(7, 11))
			sel := &Selector{SettleStubs: true}
			hits, calls, stubTurns, saved := 0, 0, 0, 0
			for c := range 40 {
				conv := harness.NewConversation(fmt.Sprintf("conv-%d", c))
				met := map[string]bool{}
				for k := range turns {
					cs := cases[rng.IntN(len(cases))]
					turn := &harness.Turn{Index: k + 1, Input: cs.Request}
					conv.Turns = append(conv.Turns, turn)
					got, err := sel.Select(context.Background(), conv, cs.Request, specs)
					if err != nil {
						t.Fatal(err)
					}
					stubbed := map[string]bool{}
					for _, g := range got {
						stubbed[g.Name] = !reflect.DeepEqual(g, full[g.Name])
					}
					if len(got) == len(specs) && slices.ContainsFunc(got, func(g harness.ToolSpec) bool { return stubbed[g.Name] }) {
						stubTurns++
						saved += all - Measure(got).Bytes
					}
					round := &harness.Round{Index: 1}
					for i, want := range cs.Expect {
						calls++
						if stubbed[want] && !met[want] {
							hits++
							met[want] = true
						}
						round.Results = append(round.Results, &harness.ToolResult{CallID: fmt.Sprintf("c%d-%d", k, i), Tool: want})
					}
					turn.Rounds = append(turn.Rounds, round)
				}
			}
			t.Logf("%s, 40 conversations × %d turns: %d of %d calls meet a stub first (a round each); %d turns offer stubs, %d schema bytes fewer each than every tool whole",
				file, turns, hits, calls, stubTurns, saved/max(stubTurns, 1))
			if turns == 2 && hits != 0 {
				t.Errorf("%s: %d calls met a stub with one change of subject: the settling turn's tools must be whole", file, hits)
			}
			if turns == 2 && stubTurns == 0 {
				t.Errorf("%s: no turn settled on stubs: the test no longer exercises SettleStubs", file)
			}
		}
	}
}

// TestStickyBadSettings: out-of-range settings are errors naming the switch.
func TestStickyBadSettings(t *testing.T) {
	for _, tc := range []struct {
		sel  *Selector
		want string
	}{
		{&Selector{StickyTop: -1}, "StickyTop -1 is negative"},
		{&Selector{StickyShare: 1.5}, "StickyShare 1.5 is outside 0–1"},
		{&Selector{StickyShare: -0.1}, "NoSticky selects afresh"},
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
	if got, err := (&Selector{}).Select(context.Background(), conv, last.Input, specs); err != nil || len(got) != DefaultTopK {
		b.Fatalf("turn 200 offers %d tools (%v), want the kept selection of %d", len(got), err, DefaultTopK)
	}
	for _, tc := range []struct {
		name string
		sel  *Selector
	}{{"sticky", &Selector{}}, {"afresh", &Selector{NoSticky: true}}} {
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

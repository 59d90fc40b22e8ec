package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tokens"
)

// clearOldRun runs one turn of n read calls whose results are about
// resultTokens tokens each, far below the window, through the agent with
// policy, and returns every request sent, the policy's events, the notes
// it persisted and the turn's usage; guards wrap the read tool (the scripted model counts a prompt
// cache: the prefix unchanged since the previous request).
func clearOldRun(t *testing.T, n, resultTokens int, policy *CompactPolicy, guards ...harness.Guard) ([]*harness.Request, []harness.Event, []harness.Note, harness.Usage) {
	t.Helper()
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(filler(len(c.Args)*31+int(c.Args[len(c.Args)-3]), resultTokens)), nil
		},
	}
	var steps []scripted.Step
	for i := range n {
		steps = append(steps, scripted.Step{Text: fmt.Sprintf("reading part %d", i), ToolCalls: []scripted.Call{scriptCall("read", fmt.Sprintf(`{"path":"part%03d.txt"}`, i))}})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	rec := &stuckRecorder{}
	notes := &noteRecorder{}
	agent, err := harness.New(rec.wrap(scripted.New(&scripted.Script{Steps: steps}, &scripted.Options{Counter: o200k(t)})), &harness.Options{
		Tools: []harness.Tool{read}, MaxRounds: n + 1, Recorder: notes, Observer: rec.observe, Guards: guards,
		Policies: []harness.ViewPolicy{policy},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), harness.NewConversation("c"), "read every part")
	if err != nil || res.Outcome != harness.Answered {
		t.Fatalf("%v %s", err, res.Outcome)
	}
	return rec.reqs, rec.policyEvents(compactName), notes.notes, res.Usage
}

func TestCompactClearOldClearsInLargeChunksFarBelowTheWindow(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	const n, size = 40, 1500
	reqs, evs, notes, usage := clearOldRun(t, n, size, &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: c})
	if len(evs) == 0 {
		t.Fatalf("no clearing in %d requests of up to %d tokens", len(reqs), tokens.CountRequest(c, reqs[len(reqs)-1]))
	}
	if len(notes) != len(evs) {
		t.Fatalf("%d clears but %d notes persisted", len(evs), len(notes))
	}
	for _, e := range evs {
		if e.Data["stage"] != "clear-old" {
			t.Fatalf("stage %v: the window is 1 Mi tokens, only the cost trigger may clear", e.Data["stage"])
		}
		saved := e.Data["tokens_before"].(int) - e.Data["tokens_after"].(int)
		if saved < DefaultCompactClearOld*9/10 { // placeholders cost a little
			t.Fatalf("a clear saved %d tokens, want a chunk of about %d: %s", saved, DefaultCompactClearOld, e.Detail)
		}
	}
	// Between clears every request only appends; each clear changes the
	// prefix once.
	if breaks := cacheBreaks(reqs); breaks != len(evs) {
		t.Fatalf("%d cache breaks for %d clears", breaks, len(evs))
	}
	// The newest ClearOldKeepRounds rounds are always whole.
	last := reqs[len(reqs)-1].Messages
	whole := 0
	for i := len(last) - 1; i >= 0 && whole < defaultCompactClearOldKeepRounds; i-- {
		if last[i].Role != harness.RoleTool {
			continue
		}
		if strings.Contains(last[i].Text(), "recall") || tokens.CountMessage(c, &last[i]) < size/2 {
			t.Fatalf("result %d rounds back was cleared", whole+1)
		}
		whole++
	}
	// And it is cheaper than leaving everything, as a provider bills it.
	_, keepEvs, _, keepUsage := clearOldRun(t, n, size, &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: c, NoClearOld: true})
	if len(keepEvs) != 0 {
		t.Fatalf("NoClearOld cleared: %+v", keepEvs)
	}
	with, without := usage.Effective(), keepUsage.Effective()
	if with >= without {
		t.Fatalf("clearing for cost cost %.0f, keeping everything %.0f", with, without)
	}
	t.Logf("%d clears; effective tokens %.0f vs %.0f keeping everything (%.3f×)", len(evs), with, without, with/without)
}

// cacheBreaks counts the requests whose messages do not start with the
// previous request's.
func cacheBreaks(reqs []*harness.Request) int {
	breaks := 0
	for i := 1; i < len(reqs); i++ {
		a, _ := json.Marshal(reqs[i-1].Messages)
		b, _ := json.Marshal(reqs[i].Messages)
		if !strings.HasPrefix(string(b), strings.TrimSuffix(string(a), "]")) {
			breaks++
		}
	}
	return breaks
}

// A clear that cannot repay its cache miss — early in a conversation, with
// much more kept after it than cleared — waits.
func TestCompactClearOldWaitsUntilItPays(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	// 10 rounds of 13,000 tokens, 8 of them kept: the first clearable
	// round (13,000 ≥ ClearOld) is followed by 8 kept rounds of 104,000
	// tokens, and ten requests at 0.1 × 13,000 repay far less than 0.9 ×
	// 104,000.
	_, evs, _, _ := clearOldRun(t, 10, 13_000, &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: c, ClearOldKeepRounds: 8})
	if len(evs) != 0 {
		t.Fatalf("cleared before the clear could pay: %s", evs[0].Detail)
	}
}

// A result that a later, still-shown result points at (collapsed lines,
// a suppressed repeat) is not cleared while the pointer is shown; both go
// when the mark passes the pointer.
func TestCompactKeepsWhatShownResultsPointAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  harness.Cut
	}{
		{"collapse refs", harness.Cut{Kind: harness.CutDeduped, By: "collapse", Of: "call_t1_r2", Refs: []string{"call_t1_r2", "call_t1_r5"}}},
		{"dedupe of", harness.Cut{Kind: harness.CutDeduped, By: "result", Of: "call_t1_r2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := compactConv([]int{20}, 500)
			// Round 19, one of the newest 3 kept, points at rounds 2 (and 5).
			conv.Turns[0].Rounds[18].Results[0].Cuts = []harness.Cut{tc.cut}
			pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: tokens.NewCache(o200k(t), nil), ClearOld: 1000, ClearOldKeepRounds: 3}
			v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
			if err := pol.ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			pinned := map[string]bool{}
			for _, id := range append([]string{tc.cut.Of}, tc.cut.Refs...) {
				pinned[id] = true
			}
			cleared := 0
			for i, o := range v.Origins {
				if o.Result == nil {
					continue
				}
				isCleared := compactCleared(o)
				switch id := o.Result.CallID; {
				case pinned[id] && isCleared:
					t.Errorf("%s was cleared while round 19 points at it", id)
				case o.Round >= 18 && isCleared:
					t.Errorf("%s (newest 3 rounds) was cleared", id)
				case !pinned[id] && o.Round < 18 && !isCleared:
					t.Errorf("%s (round %d) was not cleared: %.60q", id, o.Round, v.Messages[i].Text())
				}
				if isCleared {
					cleared++
				}
			}
			if cleared != 17-len(pinned) {
				t.Fatalf("%d cleared, want %d", cleared, 17-len(pinned))
			}
			// Five more rounds arrive; the next clear passes round 19, and
			// its sources go with it.
			more := compactConv([]int{25}, 500).Turns[0].Rounds[20:]
			conv.Turns[0].Rounds = append(conv.Turns[0].Rounds, more...)
			v = harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
			if err := pol.ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			for _, o := range v.Origins {
				if o.Result != nil && o.Round <= 19 && !compactCleared(o) {
					t.Errorf("%s (round %d) still shown after the mark passed round 19", o.Result.CallID, o.Round)
				}
			}
		})
	}
}

// Pointers chain (a kept result points at round 5, which points at round
// 2): every link stays. A pointer at or before the mark that nothing pins
// is cleared with what it points at, even when its marker is shorter than
// a placeholder — left alone it would point at a placeholder.
func TestCompactPointerChainsAndShortPointers(t *testing.T) {
	conv := compactConv([]int{20}, 500)
	rounds := conv.Turns[0].Rounds
	point := func(r int, ids ...string) {
		res := rounds[r-1].Results[0]
		res.Model = []harness.Part{harness.TextPart("[collapsed: lines 1-40 of this output are lines 1-40 of call " + ids[0] + "]")}
		res.Cuts = []harness.Cut{{Kind: harness.CutDeduped, By: "collapse", Of: ids[0], Refs: ids}}
	}
	point(19, "call_t1_r5") // kept (newest 3), points at round 5 …
	point(5, "call_t1_r2")  // … which points at round 2
	point(9, "call_t1_r7")  // nothing points at round 9: it goes, and round 7 with it
	pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: tokens.NewCache(o200k(t), nil), ClearOld: 1000, ClearOldKeepRounds: 3}
	v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
	if err := pol.ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	state := map[int]bool{}
	for _, o := range v.Origins {
		if o.Result != nil {
			state[o.Round] = compactCleared(o)
		}
	}
	for r, want := range map[int]bool{2: false, 5: false, 7: true, 9: true, 17: true, 18: false, 19: false} {
		if state[r] != want {
			t.Errorf("round %d cleared %v, want %v", r, state[r], want)
		}
	}
}

// The cost trigger's pass is linear in the rounds: it prices only the
// newest candidate mark (every clearable result goes at once).
func BenchmarkCompactClearOld800Rounds(b *testing.B) {
	conv := compactConv([]int{800}, 40)
	pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: tokens.NewCache(o200k(b), nil), ClearOld: 1 << 30}
	for b.Loop() {
		v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
		if err := pol.ApplyView(context.Background(), v); err != nil {
			b.Fatal(err)
		}
	}
}

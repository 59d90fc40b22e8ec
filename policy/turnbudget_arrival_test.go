package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// requestsOf returns the views of the requests of a turn whose rounds
// have results of the given sizes: one after each round, the last one
// final when final is set (the synthesis call) and with tools otherwise
// (the model answers on its own).
func requestsOf(t *testing.T, b *TurnBudget, rounds [][]int, final bool) []*harness.View {
	t.Helper()
	var vs []*harness.View
	for k := 0; k <= len(rounds); k++ {
		conv, turn := turnWith(rounds[:k]...)
		vs = append(vs, apply(t, b, conv, turn, final && k == len(rounds)))
	}
	return vs
}

// sameUpTo is the number of leading messages two views share byte for
// byte: the prefix a prompt cache serves.
func sameUpTo(a, b *harness.View) int {
	n := 0
	for n < len(a.Messages) && n < len(b.Messages) && a.Messages[n].Text() == b.Messages[n].Text() &&
		a.Messages[n].Role == b.Messages[n].Role && a.Messages[n].ToolCallID == b.Messages[n].ToolCallID {
		n++
	}
	return n
}

func TestTurnBudgetOnArrival(t *testing.T) {
	seven := slices.Repeat([][]int{{8000}}, 7)
	tests := []struct {
		name   string
		rounds [][]int
		final  bool
		want   []int // the last request's evidence of the turn
	}{
		// The seed's case: the model answers on its own in round 8, and
		// that request stays within the budget: 22,000 instead of 56,000.
		// Round 1 leaves room for round 2 (the newest when its share is
		// decided) and the floors of rounds 2-6; round 2's share (3,200)
		// would not repay its rewrite, so it keeps the floor, as do 3-6;
		// 7 is read whole to decide.
		{"seven bodies, answered with tools offered", seven, false, []int{8000, 1200, 1200, 1200, 1200, 1200, 8000}},
		// The synthesis call: round 7's share (what is left) holds it whole.
		{"seven bodies, synthesis call", seven, true, []int{8000, 1200, 1200, 1200, 1200, 1200, 8000}},
		// Small results are never trimmed. Round 3's water-filled share
		// (5,726 each) would not repay its rewrite: the three drop to the
		// floor and one of them, as the slack allows, is shown whole.
		{"lopsided", [][]int{{300, 420}, {800, 8000}, {8000, 8000, 8000}, {500}}, false, []int{300, 420, 800, 1200, 8000, 1200, 1200, 500}},
		// Past the round limit (8) a turn is a long task: its later
		// rounds stay whole. Round 7's share (2,000, what round 8 leaves)
		// repays its rewrite.
		{"past the round limit", slices.Repeat([][]int{{8000}}, 10), false, []int{8000, 1200, 1200, 1200, 1200, 1200, 2000, 1200, 8000, 8000}},
		// The room kept for rounds that never came costs one result of
		// round 2 its body; the other is shown whole in the slack.
		{"everything fits", [][]int{{5000}, {5000, 5000}, {5000}}, true, []int{5000, 5000, 1200, 5000}},
		// One read asked for after the budget is spent (the marker's "ask
		// for one item") is shown whole while the model reads it.
		{"one item asked for", [][]int{{8000, 8000, 8000}, {9000}}, false, []int{1200, 1200, 1200, 9000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := requestsOf(t, &TurnBudget{When: OnArrival}, tt.rounds, tt.final)
			last := vs[len(vs)-1]
			if got := turnEvidence(last); !slices.Equal(got, tt.want) {
				t.Fatalf("last request's evidence = %v, want %v", got, tt.want)
			}
			prev := 0
			for k := 1; k < len(vs); k++ {
				// The newest round is whole in a request with tools.
				if !vs[k].Final {
					for i, m := range vs[k].Messages {
						if o := vs[k].Origins[i]; m.Role == harness.RoleTool && o.Turn == 2 && o.Round == k && len(o.Cuts) != 0 {
							t.Errorf("request %d trimmed %s of the newest round", k+1, m.ToolCallID)
						}
					}
				}
				// The cached prefix never shrinks: only the round that was
				// newest in the previous request may change.
				same := sameUpTo(vs[k-1], vs[k])
				if same < prev {
					t.Errorf("request %d shares %d messages with the one before, request %d shared %d: a cache break", k+1, same, k, prev)
				}
				for i := same; i < len(vs[k-1].Messages); i++ {
					if o := vs[k-1].Origins[i]; o.Turn != 2 || o.Round != k-1 {
						t.Errorf("request %d rewrote message %d (turn %d round %d), not of the round that was newest", k+1, i, o.Turn, o.Round)
					}
				}
				prev = same
			}
			// The earlier turn's 50,000-char result stays as its last
			// request (with tools) showed it: whole.
			if got := utf8.RuneCountInString(last.Messages[3].Text()); got != 50_000 {
				t.Errorf("the ended turn's result shows %d chars, want 50,000", got)
			}
		})
	}
}

// TestTurnBudgetOnArrivalEndedTurn checks that a turn's shares survive
// into the next turn as its last request showed them, so the next turn
// extends that request's prefix.
func TestTurnBudgetOnArrivalEndedTurn(t *testing.T) {
	for _, final := range []bool{false, true} {
		t.Run(fmt.Sprintf("ended in a final request %v", final), func(t *testing.T) {
			conv, turn := turnWith([]int{8000, 8000, 8000}, []int{8000}, []int{8000})
			ended := apply(t, &TurnBudget{When: OnArrival}, conv, turn, final)
			turn.Rounds = append(turn.Rounds, &harness.Round{Index: 4, Final: final,
				Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("answer")}}})
			next := &harness.Turn{Index: 3, Input: "and the next question"}
			conv.Turns = append(conv.Turns, next)
			v := apply(t, &TurnBudget{When: OnArrival}, conv, next, false)
			if n := sameUpTo(ended, v); n != len(ended.Messages) {
				t.Errorf("the next turn shares %d of the %d messages of the ended turn's last request", n, len(ended.Messages))
			}
		})
	}
}

// TestTurnBudgetOnArrivalEvents checks that each share is reported once,
// in the request where it is new, however many requests repeat it.
func TestTurnBudgetOnArrivalEvents(t *testing.T) {
	var (
		mu    sync.Mutex
		trims = map[string]int{}
		sums  int
	)
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Call != nil:
			trims[e.Call.ID]++
		case e.Data["when"] == "on-arrival":
			sums++
		}
	})
	rounds := slices.Repeat([][]int{{8000}}, 7)
	for k := 0; k <= len(rounds); k++ {
		conv, turn := turnWith(rounds[:k]...)
		v := harness.BuildView(conv, turn, "", nil, k == len(rounds))
		if err := (&TurnBudget{When: OnArrival}).ApplyView(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{"call_r2_1": 1, "call_r3_1": 1, "call_r4_1": 1, "call_r5_1": 1, "call_r6_1": 1}
	if fmt.Sprint(trims) != fmt.Sprint(want) || sums != 5 {
		t.Errorf("trims reported %v and %d summaries, want %v and 5 (the final request decides rounds 6 and 7 together, 7 whole)", trims, sums, want)
	}
}

// TestTurnBudgetArrive is the rule a proxy applies to the results new in
// one request: they share what the turn has left after spent, up to the
// turn's round limit (harness.DefaultMaxRounds); a later round's results
// stay whole and are not counted.
func TestTurnBudgetArrive(t *testing.T) {
	tests := []struct {
		sizes []int
		spent int
		round int
		want  []int
		shown int
	}{
		{[]int{8260, 8260}, 0, 1, []int{8260, 8260}, 16_520},
		{[]int{8000, 8000, 8000, 8000}, 0, 1, []int{6000, 6000, 6000, 6000}, 24_000},
		{[]int{300, 9000, 9000}, 14_000, 2, []int{300, 4850, 4850}, 10_000},
		{[]int{8000}, 24_000, 3, []int{1200}, 1200},
		{[]int{800}, 30_000, 4, []int{800}, 800},
		{[]int{8000}, 24_000, harness.DefaultMaxRounds, []int{1200}, 1200},
		{[]int{8000}, 24_000, harness.DefaultMaxRounds + 1, []int{8000}, 0},
	}
	for _, tt := range tests {
		v := &harness.View{Turn: &harness.Turn{Index: 1}}
		for i, n := range tt.sizes {
			id := fmt.Sprintf("c%d", i)
			res := &harness.ToolResult{CallID: id, Tool: "fetch", Parts: []harness.Part{harness.TextPart(body(id, n, 'x'))}}
			v.Messages = append(v.Messages, harness.ToolMessage(res))
			v.Origins = append(v.Origins, harness.Origin{Turn: 1, Round: tt.round, Result: res})
		}
		shown, err := (&TurnBudget{When: OnArrival}).Arrive(context.Background(), v, tt.spent)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range v.Messages {
			got = append(got, utf8.RuneCountInString(m.Text()))
			if utf8.RuneCountInString(m.Text()) < utf8.RuneCountInString(v.Origins[0].Result.FullText()) && !strings.Contains(m.Text(), defaultTurnMarker) {
				t.Errorf("%s trimmed without the marker", m.ToolCallID)
			}
		}
		if !slices.Equal(got, tt.want) || shown != tt.shown {
			t.Errorf("Arrive(%v, spent %d, round %d) = %v showing %d, want %v showing %d", tt.sizes, tt.spent, tt.round, got, shown, tt.want, tt.shown)
		}
	}
}

// TestTurnBudgetOnArrivalInAgent runs the seed's case in the real loop:
// a model that reads one 8,000-character body in each of seven rounds and
// answers on its own in round eight, tools still offered. The OnArrival
// budget keeps that answer request within the budget, every request shows the body the
// model just read whole, no request's shared prefix with the one before
// shrinks, and the stored results stay whole.
func TestTurnBudgetOnArrivalInAgent(t *testing.T) {
	var (
		mu       sync.Mutex
		requests []*harness.Request
	)
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		if req.Round == 8 {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("answer")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{
			{ID: fmt.Sprintf("get%d", req.Round), Name: "get_article", Args: []byte(`{}`)}}}}, nil
	})
	get := harness.Tool{Spec: harness.ToolSpec{Name: "get_article", Risk: harness.ReadOnly}, Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(body(c.ID, 8000, 'z')), nil
	}}
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{get}, Policies: []harness.ViewPolicy{&TurnBudget{When: OnArrival}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), harness.NewConversation(""), "Which of my published posts has this feature not been mentioned in yet?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.Answered || len(requests) != 8 || requests[7].Final {
		t.Fatalf("outcome %s after %d requests", res.Outcome, len(requests))
	}
	if got := res.Turn.Rounds[7].Stats.EvidenceChars; got != 22_000 || got > DefaultTurnChars {
		t.Errorf("the answer request shows %d chars of evidence, want 22,000 (8,000 + 5 × 1,200 + the newest 8,000; 56,000 unbudgeted), within the budget", got)
	}
	prev := 0
	for k, req := range requests {
		newest := req.Messages[len(req.Messages)-1]
		if k > 0 && utf8.RuneCountInString(newest.Text()) != 8000 {
			t.Errorf("request %d shows the body just read as %d chars, want it whole", k+1, utf8.RuneCountInString(newest.Text()))
		}
		if k == 0 {
			continue
		}
		same := 0
		for same < len(requests[k-1].Messages) && requests[k-1].Messages[same].Text() == req.Messages[same].Text() {
			same++
		}
		if same < prev {
			t.Errorf("request %d shares %d messages with the one before, down from %d", k+1, same, prev)
		}
		prev = same
	}
	for _, r := range res.Turn.Rounds {
		for _, tr := range r.Results {
			if utf8.RuneCountInString(tr.FullText()) != 8000 || len(tr.Cuts) > 0 {
				t.Errorf("%s: the stored result was changed by a view policy", tr.CallID)
			}
		}
	}
}

// FuzzTurnBudgetOnArrival checks the OnArrival invariants on turns of
// arbitrary shape: the newest round is whole in a request with tools, a
// request's shared prefix with the one before never shrinks, only the
// round that was newest is rewritten, every trim is marked, and the
// stored results are never changed.
func FuzzTurnBudgetOnArrival(f *testing.F) {
	f.Add([]byte{80, 80, 80, 80, 80, 80, 80}, uint16(24_000), false)
	f.Add([]byte{3, 4, 8, 80, 0, 80, 80, 80, 5}, uint16(24_000), true)
	f.Add([]byte{200, 200, 0, 10, 10, 10, 0, 250}, uint16(10_000), false)
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 90}, uint16(300), true)
	f.Fuzz(func(t *testing.T, shape []byte, budget uint16, final bool) {
		if len(shape) > 24 {
			t.Skip()
		}
		// Each byte is a result of 100 × b characters; a 0 ends a round.
		var rounds [][]int
		cur := []int{}
		for _, b := range shape {
			if b == 0 {
				if len(cur) > 0 {
					rounds, cur = append(rounds, cur), []int{}
				}
				continue
			}
			cur = append(cur, 100*int(b))
		}
		if len(cur) > 0 {
			rounds = append(rounds, cur)
		}
		b := &TurnBudget{When: OnArrival, Chars: int(budget)}
		vs := requestsOf(t, b, rounds, final)
		prev := 0
		for k, v := range vs {
			for i, m := range v.Messages {
				o := v.Origins[i]
				if m.Role != harness.RoleTool || o.Result == nil {
					continue
				}
				if len(o.Result.Cuts) > 0 || o.Result.Model != nil {
					t.Fatalf("request %d: stored result %s changed", k+1, m.ToolCallID)
				}
				if len(o.Cuts) == 0 {
					continue
				}
				if o.Turn == 2 && o.Round == k && !v.Final {
					t.Fatalf("request %d trimmed the newest round", k+1)
				}
				if !strings.Contains(m.Text(), "… (trimmed") {
					t.Fatalf("request %d: %s trimmed without a marker", k+1, m.ToolCallID)
				}
			}
			if k == 0 {
				continue
			}
			same := sameUpTo(vs[k-1], v)
			if same < prev {
				t.Fatalf("request %d shares %d messages with the one before, down from %d", k+1, same, prev)
			}
			for i := same; i < len(vs[k-1].Messages); i++ {
				if o := vs[k-1].Origins[i]; o.Turn != 2 || o.Round != k-1 {
					t.Fatalf("request %d rewrote message %d (turn %d round %d)", k+1, i, o.Turn, o.Round)
				}
			}
			prev = same
		}
	})
}

// TestRepaidShares checks the rewrite rule of OnArrival: a share is kept
// when its rewrite repays within arrivalPayback requests under every
// default price, else the floor, else the whole result, with the slack
// handed back whole in view order; a round whose rewrite still does not
// repay (whole results after a trimmed one are re-sent too) keeps the
// floor, or stays whole.
func TestRepaidShares(t *testing.T) {
	tests := []struct {
		name        string
		sizes, kept []int
		left        int
		want        []int
	}{
		{"nothing trimmed", []int{500, 8000}, []int{500, 8000}, 24_000, []int{500, 8000}},
		{"a deep share repays", []int{8000}, []int{1500}, 1500, []int{1500}},
		{"a shallow share drops to the floor", []int{8000}, []int{3200}, 3200, []int{1200}},
		{"the slack shows one whole", []int{8000, 8000, 8000}, []int{5726, 5726, 5726}, 17_180, []int{8000, 1200, 1200}},
		{"in view order", []int{6000, 6000, 6000}, []int{4000, 4000, 4000}, 12_000, []int{6000, 1200, 1200}},
		// Showing the 6,000 whole after the trimmed 9,000 would re-send
		// it: both keep the floor.
		{"a whole result after a trim", []int{9000, 6000}, []int{4000, 4000}, 8000, []int{1200, 1200}},
		{"a result near the floor stays whole", []int{1300}, []int{1250}, 1250, []int{1300}},
		// The floor trims of the first two repay alone, but the 30,000
		// whole after them is re-sent at the write price.
		{"the round's rewrite does not repay", []int{2000, 2000, 30_000}, []int{1200, 1200, 30_000}, 32_400, []int{2000, 2000, 30_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := repaidShares(tt.sizes, tt.kept, tt.left, 1200)
			if !slices.Equal(got, tt.want) {
				t.Errorf("repaidShares(%v, %v, %d) = %v, want %v", tt.sizes, tt.kept, tt.left, got, tt.want)
			}
			if !repays(tt.sizes, got) {
				t.Errorf("%v → %v does not repay its rewrite", tt.sizes, got)
			}
		})
	}
}

// FuzzRepaidShares checks repaidShares on arbitrary rounds: every result
// shows its share, the floor or its whole size; the outcome repays its
// rewrite; and it spends no more than the water-fill's shares did unless
// it kept the round whole.
func FuzzRepaidShares(f *testing.F) {
	f.Add([]byte{80, 80, 80}, uint16(17_180))
	f.Add([]byte{20, 20, 255}, uint16(30_000))
	f.Add([]byte{13}, uint16(1250))
	f.Add([]byte{3, 90, 0, 40}, uint16(5000))
	f.Fuzz(func(t *testing.T, shape []byte, left uint16) {
		if len(shape) > 32 {
			t.Skip()
		}
		var sizes []int
		for _, b := range shape {
			sizes = append(sizes, 100*int(b))
		}
		const floor = 1200
		_, kept := waterFill(sizes, max(int(left), 1), floor)
		got := repaidShares(sizes, kept, max(int(left), 1), floor)
		if !repays(sizes, got) {
			t.Fatalf("%v → %v does not repay its rewrite", sizes, got)
		}
		over := 0 // what results too close to the floor to trim add
		for j := range sizes {
			if got[j] != sizes[j] && got[j] != kept[j] && got[j] != floor {
				t.Fatalf("result %d of %v shows %d: not its share %d, the floor or whole", j, sizes, got[j], kept[j])
			}
			if got[j] == sizes[j] && kept[j] < sizes[j] && !repays(sizes[j:j+1], []int{floor}) {
				over += sizes[j] - kept[j]
			}
		}
		if !slices.Equal(got, sizes) && sum(got) > max(sum(kept), int(left))+over {
			t.Fatalf("%v → %v spends %d, over the water-fill's %d and left %d", sizes, got, sum(got), sum(kept), left)
		}
	})
}

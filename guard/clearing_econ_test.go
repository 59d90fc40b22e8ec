package guard

import (
	"context"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// econView builds the request after the first n rounds of conv's turn and
// applies the chain's CompactPolicy (far from its high water, so it only
// reproduces marks) and then e, as a bench preset does.
func econView(t *testing.T, conv *harness.Conversation, n int, cp *CompactPolicy, e *EconClear) *harness.View {
	t.Helper()
	turn := conv.Turns[0]
	all := turn.Rounds
	turn.Rounds = all[:n]
	defer func() { turn.Rounds = all }()
	v := harness.BuildView(conv, turn, "sys", nil, false)
	for _, p := range []harness.ViewPolicy{cp, e} {
		if err := p.ApplyView(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func cleared(v *harness.View) []string {
	var out []string
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && strings.HasPrefix(m.Text(), "[cleared to save context") {
			out = append(out, v.Origins[i].Result.CallID)
		}
	}
	return out
}

func TestEconClearWaitsUntilTheClearPays(t *testing.T) {
	conv := compactConv([]int{12}, 400)
	cp := &CompactPolicy{Window: 1_000_000, Counter: o200k(t)}
	e := &EconClear{Clear: cp}
	// Request 5 (4 rounds so far): clearing round 1 saves ~400 tokens per
	// request for an expected 5 more requests (200) and re-sends the three
	// kept rounds (~1,100): no.
	if v := econView(t, conv, 4, cp, e); len(cleared(v)) != 0 || len(conv.Notes) != 0 {
		t.Fatalf("cleared %v at request 5", cleared(v))
	}
	// A margin and an estimate of 0 remaining requests never clear.
	never := &EconClear{Clear: cp, Remaining: func(int) float64 { return 0 }}
	if v := econView(t, conv, 12, cp, never); len(cleared(v)) != 0 {
		t.Fatalf("cleared %v with nothing to save", cleared(v))
	}
	// Request 13: 9 old rounds (~3,600 tokens) for an expected 13 more
	// requests repay re-sending the kept rounds.
	v := econView(t, conv, 12, cp, e)
	got := cleared(v)
	if len(got) != 9 || got[0] != "call_t1_r1" || got[8] != "call_t1_r9" {
		t.Fatalf("cleared %v, want rounds 1-9", got)
	}
	if len(conv.Notes) != 1 || conv.Notes[0].By != EconClearName || conv.Notes[0].ClearTurn != 1 || conv.Notes[0].ClearRound != 9 {
		t.Fatalf("notes = %+v", conv.Notes)
	}
	if v.Messages[1].Role != harness.RoleUser || v.Messages[1].Text() != clearedNotice {
		t.Errorf("the clearing notice is not where the next view shows it: %q", v.Messages[1].Text())
	}
	for _, m := range v.Messages {
		if m.Role == harness.RoleTool && strings.Contains(m.Text(), "[cleared") && !strings.Contains(m.Text(), `call recall with {"call_id"`) {
			t.Errorf("placeholder without the way back: %s", m.Text())
		}
	}

	// The next request (rebuilt from the transcript; the chain's
	// CompactPolicy reproduces the mark) repeats the clearing request
	// message for message: the cache breaks once.
	next := econView(t, conv, 12, cp, &EconClear{Clear: cp, Remaining: func(int) float64 { return 0 }})
	if len(next.Messages) != len(v.Messages) {
		t.Fatalf("next view has %d messages, the clearing one %d", len(next.Messages), len(v.Messages))
	}
	for i := range v.Messages {
		if !sameText(&v.Messages[i], &next.Messages[i]) {
			t.Fatalf("message %d differs in the next view:\n%q\n%q", i, v.Messages[i].Text(), next.Messages[i].Text())
		}
	}
}

func TestEconClearMarginAndKeep(t *testing.T) {
	conv := compactConv([]int{12}, 400)
	cp := &CompactPolicy{Window: 1_000_000, Counter: o200k(t)}
	if v := econView(t, conv, 12, cp, &EconClear{Clear: cp, Margin: 20}); len(cleared(v)) != 0 {
		t.Errorf("margin 20 cleared %v", cleared(v))
	}
	conv = compactConv([]int{12}, 400)
	v := econView(t, conv, 12, cp, &EconClear{Clear: cp, KeepRounds: 6})
	if got := cleared(v); len(got) != 6 || got[5] != "call_t1_r6" {
		t.Errorf("KeepRounds 6 cleared %v", got)
	}
}

func TestRequestsSoFar(t *testing.T) {
	conv := compactConv([]int{3, 4, 2}, 10)
	v := harness.BuildView(conv, conv.Turns[1], "", nil, false)
	if got := requestsSoFar(v); got != 3+4+1 {
		t.Errorf("requestsSoFar = %d, want 8", got)
	}
}

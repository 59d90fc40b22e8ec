package benchcore

import (
	"context"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/stack"
)

// trimNewestToo is harness with the turn budget decided the moment results
// arrive, the newest round included (the proxy's rule,
// policy.TurnBudget.Arrive, as the harness-proxy preset applies it): each
// round of the turn shares what the turn's earlier rounds left, as a proxy
// forwards it.
func trimNewestToo() replay.Policy {
	return replay.Policy{Name: "trim-newest-too", New: func(env replay.Env) (*replay.Config, error) {
		st := stack.New(&stack.Config{NoTurnBudget: true})
		arrive := arrivalRounds(&policy.TurnBudget{})
		return &replay.Config{Guards: st.Guards, Policies: append([]harness.ViewPolicy{arrive}, st.Policies...), Recall: st.Recall}, nil
	}}
}

// TestAnsweredWithTools measures the seed's case (answered-with-tools):
// the answer request, made with tools offered, under harness's default
// turn budget (the synthesis call only), the budget decided on arrival
// (harness+arrival, which keeps that request within the budget), the
// proxy's rule that trims the newest round too, and no budget.
func TestAnsweredWithTools(t *testing.T) {
	recs, err := Suite()
	if err != nil {
		t.Fatal(err)
	}
	var rec *replay.Recording
	for _, r := range recs {
		if r.ID == "answered-with-tools" {
			rec = r
		}
	}
	if rec == nil {
		t.Fatal("no answered-with-tools scenario in the suite")
	}
	needles := replay.Needles(rec)
	if len(needles) != 1+6+4 {
		t.Fatalf("%d needles, want the first id, the 6 related links and the 4 mentions: %v", len(needles), needles)
	}
	tests := []struct {
		preset   string // or trim-newest-too
		evidence int    // chars of evidence in the answer request
		visible  int    // needles visible where first used
		breaks   int
	}{
		// No budget acts on a request with tools offered.
		{"none", 55_991, 11, 0},
		{"harness-no-turnbudget", 55_991, 11, 0},
		{"harness", 55_991, 11, 0},
		// Within the budget: round 1 whole, 2-6 at the 1,200 floor (each
		// share leaves room for the newest round and the floors of the
		// rounds still to come, and a partial share would not repay its
		// rewrite), 7 whole while newest. Every related link is read
		// whole by the call that follows it; two mentions, past their
		// articles' floors, are hidden, and recall still holds them.
		{"harness+arrival", 21_996, 9, 0},
		// Trimming the newest round too hides the related link at the end
		// of articles 4-7 from the call that follows it: the model could
		// not choose its next read (a live run would spend a recall round
		// on each, which a replay cannot show).
		{"trim-newest-too", 28_798, 6, 0},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			pol := trimNewestToo()
			if tt.preset != pol.Name {
				p, err := Lookup(tt.preset)
				if err != nil {
					t.Fatal(err)
				}
				pol = p.Policy()
			}
			rep, err := replay.Replay(context.Background(), rec, pol, &replay.Options{Needles: needles})
			if err != nil {
				t.Fatal(err)
			}
			answer := rep.Calls[len(rep.Calls)-1]
			if answer.Final || answer.Tools == 0 {
				t.Fatalf("the answer request is final or offers no tools: %+v", answer)
			}
			t.Logf("%s: answer request %d chars of evidence, %d/%d needles visible, %d cache breaks, %.0f effective tokens, lost %v",
				tt.preset, answer.EvidenceChars, rep.Visible, rep.Needles, CacheBreaks(rep.Calls), rep.Effective, rep.Lost)
			if tt.preset == "harness+arrival" && answer.EvidenceChars > policy.DefaultTurnChars {
				t.Errorf("the answer request carries %d chars of evidence, over the turn's budget of %d", answer.EvidenceChars, policy.DefaultTurnChars)
			}
			if answer.EvidenceChars != tt.evidence || rep.Visible != tt.visible || CacheBreaks(rep.Calls) != tt.breaks {
				t.Errorf("answer request %d chars, %d needles visible, %d cache breaks; want %d, %d, %d",
					answer.EvidenceChars, rep.Visible, CacheBreaks(rep.Calls), tt.evidence, tt.visible, tt.breaks)
			}
		})
	}
}

package bench

import (
	"context"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/replay"
	"github.com/agentharness/harness/stack"
)

// trimNewestToo is harness with the turn budget's shares applied the
// moment results arrive, the newest round included (a proxy's rule): what
// the default would do without showing the newest round whole.
func trimNewestToo() replay.Policy {
	return replay.Policy{Name: "trim-newest-too", New: func(env replay.Env) (*replay.Config, error) {
		st := stack.New(&stack.Config{NoTurnBudget: true})
		tb := &policy.TurnBudget{When: policy.OnArrival}
		arrive := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
			final := v.Final
			v.Final = true // every round decided, the newest too
			err := tb.ApplyView(ctx, v)
			v.Final = final
			return err
		})
		return &replay.Config{Guards: st.Guards, Policies: append([]harness.ViewPolicy{arrive}, st.Policies...), Recall: st.Recall}, nil
	}}
}

// TestAnsweredWithTools measures the seed's case (answered-with-tools):
// the answer request, made with tools offered, under harness's default
// turn budget (the synthesis call only), the budget decided on arrival
// (harness+arrival), that budget applied to the newest round too, and no
// budget.
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
		// Rounds 1-3 whole, 4-6 at the 1,200 floor, 7 whole while newest:
		// one mention (in article 4 or 6, past its share) is hidden, and
		// recall still holds it.
		{"harness+arrival", 35_595, 10, 0},
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
			if answer.EvidenceChars != tt.evidence || rep.Visible != tt.visible || CacheBreaks(rep.Calls) != tt.breaks {
				t.Errorf("answer request %d chars, %d needles visible, %d cache breaks; want %d, %d, %d",
					answer.EvidenceChars, rep.Visible, CacheBreaks(rep.Calls), tt.evidence, tt.visible, tt.breaks)
			}
		})
	}
}

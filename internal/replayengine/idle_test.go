package replayengine

import (
	"context"
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
	"testing"
	"time"
)

// TestIdleGaps: the gap before each call is the time since the previous
// call's response, 0 where either lacks a time or time runs backwards.
func TestIdleGaps(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name  string
		times [][]time.Time // per turn, per call
		want  []time.Duration
	}{
		{"none recorded", [][]time.Time{{{}, {}}, {{}}}, []time.Duration{0, 0, 0}},
		{"across turns", [][]time.Time{{at(0), at(time.Minute)}, {at(20 * time.Minute)}}, []time.Duration{0, time.Minute, 19 * time.Minute}},
		{"a call without a time", [][]time.Time{{at(0), {}, at(20 * time.Minute), at(30 * time.Minute)}}, []time.Duration{0, 0, 0, 10 * time.Minute}},
		{"backwards", [][]time.Time{{at(time.Hour), at(0)}}, []time.Duration{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &replay.Recording{}
			for _, turn := range tc.times {
				tu := &replay.Turn{}
				for _, tm := range turn {
					tu.Calls = append(tu.Calls, &replay.Call{Time: tm})
				}
				rec.Turns = append(rec.Turns, tu)
			}
			got := IdleGaps(rec)
			if len(got) != len(tc.want) {
				t.Fatalf("%d gaps, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("gap %d = %s, want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestReplayTellsPoliciesTheIdleTime: a replay gives each request's view
// the recorded pause before it (View.Idle = IdleGaps), so a policy that
// acts on a cold cache acts where the recorded run's cache went cold.
func TestReplayTellsPoliciesTheIdleTime(t *testing.T) {
	rec, err := replay.ParseFile("../../replay/testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var seen []time.Duration
	if _, err := Replay(context.Background(), rec, idlePolicy(&seen), nil); err != nil {
		t.Fatal(err)
	}
	want := IdleGaps(rec)
	if len(seen) != len(want) {
		t.Fatalf("%d views for %d calls", len(seen), len(want))
	}
	nonzero := 0
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("call %d: the view's Idle is %s, the recording's gap %s", i, seen[i], want[i])
		}
		if want[i] > 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Fatal("the fixture records no gap: the test shows nothing")
	}
}

// idlePolicy is a policy whose views append their Idle to seen.
func idlePolicy(seen *[]time.Duration) Policy {
	return Policy{Name: "idle", New: func(Env) (*Config, error) {
		return &Config{Policies: []harness.ViewPolicy{harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
			*seen = append(*seen, v.Idle)
			return nil
		})}}, nil
	}}
}

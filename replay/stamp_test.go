package replay

import (
	"context"
	"testing"
	"time"

	"github.com/agentharness/harness"
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
			rec := &Recording{}
			for _, turn := range tc.times {
				tu := &Turn{}
				for _, tm := range turn {
					tu.Calls = append(tu.Calls, &Call{Time: tm})
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

// TestImportedTimes: Claude Code and Codex record when each response was
// written, and the importers keep it on the call; SWE-agent does not.
func TestImportedTimes(t *testing.T) {
	for _, tc := range []struct {
		file  string
		first string // the first call's time, RFC 3339; "" for none
	}{
		{"testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl", "2025-12-17T01:50:32.471Z"},
		{"testdata/codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", "any"},
		{"testdata/pydicom-trimmed.traj.json", ""},
	} {
		rec, err := ParseFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		var prev time.Time
		n := 0
		for _, turn := range rec.Turns {
			for _, c := range turn.Calls {
				if tc.first == "" {
					if !c.Time.IsZero() {
						t.Errorf("%s: call %d has time %s, the format records none", tc.file, n, c.Time)
					}
					continue
				}
				if c.Time.IsZero() || c.Time.Before(prev) {
					t.Errorf("%s: call %d at %s, after %s", tc.file, n, c.Time, prev)
				}
				if n == 0 && tc.first != "any" && !c.Time.Equal(parseStamp(tc.first)) {
					t.Errorf("%s: first call at %s, want %s", tc.file, c.Time, tc.first)
				}
				prev = c.Time
				n++
			}
		}
	}
}

// TestReplayTellsPoliciesTheIdleTime: a replay gives each request's view
// the recorded pause before it (View.Idle = IdleGaps), so a policy that
// acts on a cold cache acts where the recorded run's cache went cold.
func TestReplayTellsPoliciesTheIdleTime(t *testing.T) {
	rec, err := ParseFile("testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
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

package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestStuckOffSwitches: each No… field turns off its detector (or the
// repeats' nudge or stop) and only that; a negative threshold, which
// once meant off, is an error naming the field and its No… switch.
func TestStuckOffSwitches(t *testing.T) {
	repeats := []string{"a", "a", "a", "a", "a", "a"}
	alternates := []string{"a", "b", "a", "b", "a", "b"}
	failures := []string{"xa", "xa", "xa"}
	tests := []struct {
		name   string
		keys   []string
		policy *StuckPolicy
		nudges int    // nudge messages added to the view (one per streak and every NudgeAfter rounds of it)
		stop   string // in StopReason; "" for no stop
		absent string // in no message of the view ("" for no check)
	}{
		{"repeats stop", repeats, &StuckPolicy{}, 1, "6 rounds in a row", ""},
		{"NoRepeatAbort nudges only", repeats, &StuckPolicy{NoRepeatAbort: true}, 2, "", ""},
		{"NoRepeatNudge stops only", repeats, &StuckPolicy{NoRepeatNudge: true}, 0, "6 rounds in a row", ""},
		{"repeats off", repeats, &StuckPolicy{NoRepeatNudge: true, NoRepeatAbort: true}, 0, "", ""},
		{"NoRepeatAbort keeps NudgeAfter", repeats, &StuckPolicy{NoRepeatAbort: true, NudgeAfter: 5}, 1, "", ""},
		{"alternation stops", alternates, &StuckPolicy{}, 1, "alternated", ""},
		{"NoAlternate", alternates, &StuckPolicy{NoAlternate: true}, 0, "", "alternated"},
		{"NoAlternate leaves repeats", repeats, &StuckPolicy{NoAlternate: true}, 1, "6 rounds in a row", ""},
		{"failures stop", failures, &StuckPolicy{}, 1, "failed 3 rounds in a row", ""},
		// Only the repeats detector still sees the failing rounds.
		{"NoFailingCall", failures, &StuckPolicy{NoFailingCall: true}, 1, "", "failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conv, turn := stuckTurnOf(tc.keys)
			v := harness.BuildView(conv, turn, "system", nil, false)
			before := len(v.Messages)
			if err := tc.policy.ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			if got := len(v.Messages) - before; got != tc.nudges {
				t.Errorf("%d nudges, want %d: %q", got, tc.nudges, texts(v))
			}
			if (v.Stop == harness.Stuck) != (tc.stop != "") || !strings.Contains(v.StopReason, tc.stop) {
				t.Errorf("stop %q %q, want one containing %q", v.Stop, v.StopReason, tc.stop)
			}
			for _, m := range texts(v) {
				if tc.absent != "" && strings.Contains(m, tc.absent) {
					t.Errorf("message %q contains %q", m, tc.absent)
				}
			}
		})
	}
}

// TestStuckNegativeIsAnError: a negative threshold, which once meant off,
// is an error naming the field, its default and its No… switch (even with
// the switch set: the number is still wrong), and leaves the view alone.
func TestStuckNegativeIsAnError(t *testing.T) {
	tests := []struct {
		policy *StuckPolicy
		want   string
	}{
		{&StuckPolicy{NudgeAfter: -1}, "stuck: NudgeAfter -1 is negative: 0 is the default (3), NoRepeatNudge turns it off"},
		{&StuckPolicy{AbortAfter: -1}, "AbortAfter -1 is negative: 0 is the default (6), NoRepeatAbort"},
		{&StuckPolicy{AlternateAfter: -6}, "AlternateAfter -6 is negative: 0 is the default (6), NoAlternate"},
		{&StuckPolicy{FailAfter: -1, NoFailingCall: true}, "FailAfter -1 is negative: 0 is the default (3), NoFailingCall"},
	}
	for _, tc := range tests {
		conv, turn := stuckTurnOf([]string{"a", "a", "a"})
		v := harness.BuildView(conv, turn, "system", nil, false)
		before := len(v.Messages)
		err := tc.policy.ApplyView(context.Background(), v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
		if len(v.Messages) != before || v.Stop != "" {
			t.Errorf("%s: a rejected policy changed the view", tc.want)
		}
	}
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/stack"
)

// policyConfig parses args as "harness run"'s policy flags and returns
// the stack they describe. With usage set it checks that they are a usage
// error instead and returns false, as it does after reporting any other
// failure.
func policyConfig(t *testing.T, args []string, usage bool) (stack.Config, bool) {
	t.Helper()
	var p policyFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	sc, err := p.config("m", nil, nil, nil)
	switch {
	case usage:
		if !errors.Is(err, errUsage) {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
		return sc, false
	case err != nil:
		t.Errorf("%v: %v", args, err)
		return sc, false
	}
	return sc, true
}

func TestPolicyFlagsClearOld(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    int  // CompactPolicy.ClearOld
		off     bool // CompactPolicy.NoClearOld
		compact bool // a CompactPolicy is built
		usage   bool
		idle    time.Duration // CompactPolicy.ClearWhenIdle
	}{
		{args: nil, want: 0, compact: true}, // CompactPolicy's default, DefaultCompactClearOld
		{args: []string{"--clear-old", "30000"}, want: 30000, compact: true},
		{args: []string{"--clear-old", "0"}, off: true, compact: true},
		{args: []string{"--no-compact"}},
		{args: []string{"--clear-old", "-1"}, usage: true},
		{args: []string{"--clear-when-idle", "5m"}, idle: 5 * time.Minute, compact: true},
		{args: []string{"--clear-when-idle", "-1s"}, usage: true},
		{args: []string{"--clear-when-idle", "off"}, compact: true},
		{args: []string{"--clear-when-idle", "auto"}, compact: true}, // model "m": no known cache lifetime
	} {
		sc, ok := policyConfig(t, tc.args, tc.usage)
		if !ok {
			continue
		}
		var cp *policy.CompactPolicy
		for _, pol := range stack.New(&sc).Policies {
			if c, ok := pol.(*policy.CompactPolicy); ok {
				cp = c
			}
		}
		if (cp != nil) != tc.compact {
			t.Fatalf("%v: compact policy built %v, want %v", tc.args, cp != nil, tc.compact)
		}
		if cp != nil && (cp.ClearOld != tc.want || cp.NoClearOld != tc.off || cp.ClearWhenIdle != tc.idle) {
			t.Errorf("%v: ClearOld %d NoClearOld %v ClearWhenIdle %s, want %d %v %s", tc.args, cp.ClearOld, cp.NoClearOld, cp.ClearWhenIdle, tc.want, tc.off, tc.idle)
		}
	}
}

// TestDefaultFlagsAreTheHarnessPreset fails when harness run with its
// default flags would run another stack than the bench measures as
// "harness": both must be the default stack (stack.Config's zero value),
// but for the run's own model, counter and summarizer given to compaction.
// The CLI's size flags say "0 turns it off"; the library's zero is "the
// default", so the flags map 0 to the No… field.
func TestPolicyFlagsMaxBytes(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		ceiling *guard.ResultPolicy // nil: the default ceiling
		usage   bool
	}{
		{args: nil},
		{args: []string{"--max-bytes", "0"}, ceiling: &guard.ResultPolicy{NoCeiling: true}},
		{args: []string{"--max-bytes", "8192"}, ceiling: &guard.ResultPolicy{MaxBytes: 8192}},
		{args: []string{"--max-bytes", "0", "--dedupe", "3"}, ceiling: &guard.ResultPolicy{NoCeiling: true, Dedupe: guard.Dedupe{From: 3}}},
		{args: []string{"--max-bytes", "-5"}, usage: true},
	} {
		sc, ok := policyConfig(t, tc.args, tc.usage)
		if !ok {
			continue
		}
		if !reflect.DeepEqual(sc.Ceiling, tc.ceiling) {
			t.Errorf("%v: Ceiling %+v, want %+v", tc.args, sc.Ceiling, tc.ceiling)
		}
	}
}

func TestDefaultFlagsAreTheHarnessPreset(t *testing.T) {
	var p policyFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	sc, err := p.config("gpt-4.1", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := sc.Compact
	if cp == nil || cp.Model != "gpt-4.1" {
		t.Fatalf("compaction %+v lacks the run's model", cp)
	}
	if cp.ClearOld != 0 || cp.Window != 0 || cp.HighWater != 0 || cp.Target != 0 || cp.ClearAtLeast != 0 ||
		cp.KeepRounds != 0 || cp.ClearOldKeepRounds != 0 || cp.KeepTurns != 0 || cp.SummaryTokens != 0 || cp.NoRecall || cp.NoClearOld {
		t.Errorf("compaction is tuned away from its defaults: %+v", cp)
	}
	sc.Compact = nil // the run's own model and counter, nothing else
	if want := benchcore.HarnessStack(); !reflect.DeepEqual(sc, want) {
		t.Errorf("harness run's default stack %+v differs from the harness preset's %+v", sc, want)
	}
	got, want := shape(stack.New(&sc)), shape(stack.New(ptr(benchcore.HarnessStack())))
	if got != want {
		t.Errorf("stacks differ: run %s, preset %s", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// shape names a stack's parts in order.
func shape(s *stack.Stack) string {
	out := fmt.Sprintf("%d guards;", len(s.Guards))
	for _, p := range s.Policies {
		out += fmt.Sprintf(" %T", p)
	}
	for _, t := range s.Tools {
		out += " tool:" + t.Spec.Name
	}
	return out
}

// TestPolicyFlagsTurnBudget: the turn budget's flags choose its size and
// when it applies; the two modes other than the default exclude each other.
func TestPolicyFlagsTurnBudget(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  *policy.TurnBudget // nil: the default
		off   bool
		usage bool
	}{
		{args: nil},
		{args: []string{"--budget-on-arrival"}, want: &policy.TurnBudget{Chars: policy.DefaultTurnChars, When: policy.OnArrival}},
		{args: []string{"--budget-every-round"}, want: &policy.TurnBudget{Chars: policy.DefaultTurnChars, When: policy.EveryRound}},
		{args: []string{"--turn-budget", "10000", "--budget-on-arrival"}, want: &policy.TurnBudget{Chars: 10000, When: policy.OnArrival}},
		{args: []string{"--turn-budget", "0"}, off: true},
		{args: []string{"--budget-on-arrival", "--budget-every-round"}, usage: true},
	} {
		sc, ok := policyConfig(t, tc.args, tc.usage)
		if !ok {
			continue
		}
		if sc.NoTurnBudget != tc.off || !reflect.DeepEqual(sc.TurnBudget, tc.want) {
			t.Errorf("%v: NoTurnBudget %v, TurnBudget %+v; want %v, %+v", tc.args, sc.NoTurnBudget, sc.TurnBudget, tc.off, tc.want)
		}
	}
}

// TestRunClearWhenIdleJunk: harness run refuses a --clear-when-idle that is
// neither auto, off nor a duration, as a usage error saying what it wants.
func TestRunClearWhenIdleJunk(t *testing.T) {
	_, stderr, code := inproc(t, "run", "--model", "scripted:x", "--workspace", t.TempDir(), "--clear-when-idle", "soon", "hi")
	if code != 2 || !strings.Contains(stderr, "clear-when-idle") || !strings.Contains(stderr, "want auto, off or a duration") {
		t.Errorf("exit %d, want 2 and what the flag takes\n%s", code, stderr)
	}
}

package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// TestCompactClearWhenIdle: after a pause longer than ClearWhenIdle (by
// default catalog.CacheLifetime of the model: 5 minutes for Claude, an hour for
// OpenAI's models) the
// old results are cleared at once, however few tokens they hold, the
// newest ClearOldKeepRounds rounds kept; the clear is a mark, so later
// views show it without the pause; a shorter pause, or the option off,
// clears nothing. ClearWhenIdleKeepRounds keeps more rounds;
// ClearWhenIdleBanked clears only what the savings bank covers.
func TestCompactClearWhenIdle(t *testing.T) {
	const rounds = 10
	view := func(p *CompactPolicy, idles ...time.Duration) []*harness.View {
		t.Helper()
		// The rounds were answered at t0; each view is built idles[k] later.
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		now := t0
		eng, err := harness.NewEngine(&harness.Options{Policies: []harness.ViewPolicy{p}, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		conv := harness.NewConversation("c")
		turn, err := eng.BeginTurn(ctx, conv, "read the parts")
		if err != nil {
			t.Fatal(err)
		}
		for i := range rounds {
			id := fmt.Sprintf("call_%d", i)
			res := harness.TextResult(filler(i, 200))
			res.CallID, res.Tool = id, "read"
			round := &harness.Round{Index: i + 1, Assistant: harness.Message{Role: harness.RoleAssistant,
				ToolCalls: []harness.ToolCall{{ID: id, Name: "read", Args: []byte(fmt.Sprintf(`{"path":"part%d"}`, i))}}},
				Results: []*harness.ToolResult{res}, Answered: t0}
			if err := eng.AppendRound(ctx, conv, turn, round); err != nil {
				t.Fatal(err)
			}
		}
		var out []*harness.View
		for _, d := range idles {
			now = t0.Add(d)
			v, err := eng.View(ctx, conv, turn, nil, false, false)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	whole := func(v *harness.View) (n int) {
		for _, m := range v.Messages {
			if m.Role == harness.RoleTool && !strings.Contains(m.Text(), "recall") {
				n++
			}
		}
		return n
	}
	c := tokens.NewCache(o200k(t), nil)
	policy := func(idle time.Duration) *CompactPolicy {
		return &CompactPolicy{Window: 1 << 20, Counter: c, ClearWhenIdle: idle}
	}
	model := func(name string) *CompactPolicy {
		return &CompactPolicy{Window: 1 << 20, Counter: c, Model: name}
	}
	for _, tc := range []struct {
		name  string
		p     *CompactPolicy
		idles []time.Duration
		whole []int // whole results in each view
	}{
		{"no pause", policy(5 * time.Minute), []time.Duration{0, time.Minute}, []int{rounds, rounds}},
		{"a long pause clears, and the mark stays", policy(5 * time.Minute), []time.Duration{time.Minute, 6 * time.Minute, 0}, []int{rounds, defaultCompactClearOldKeepRounds, defaultCompactClearOldKeepRounds}},
		{"off for a model catalog.CacheLifetime does not know", policy(0), []time.Duration{time.Hour}, []int{rounds}},
		// The default: ClearWhenIdle zero is catalog.CacheLifetime of the model.
		{"claude by default at 4 min", model("claude-sonnet-4-5"), []time.Duration{4 * time.Minute}, []int{rounds}},
		{"claude by default at 6 min", model("claude-sonnet-4-5"), []time.Duration{6 * time.Minute}, []int{defaultCompactClearOldKeepRounds}},
		{"gpt by default at 30 min", model("gpt-5-mini"), []time.Duration{30 * time.Minute}, []int{rounds}},
		{"gpt by default at 61 min", model("gpt-5-mini"), []time.Duration{61 * time.Minute}, []int{defaultCompactClearOldKeepRounds}},
		{"NoClearWhenIdle", &CompactPolicy{Window: 1 << 20, Counter: c, Model: "claude-sonnet-4-5", NoClearWhenIdle: true}, []time.Duration{2 * time.Hour}, []int{rounds}},
		{"keeping 8 rounds", &CompactPolicy{Window: 1 << 20, Counter: c, ClearWhenIdle: 5 * time.Minute, ClearWhenIdleKeepRounds: 8}, []time.Duration{6 * time.Minute, 0}, []int{8, 8}},
		// A turn this small has saved nothing: the bank covers no clear.
		{"banked", &CompactPolicy{Window: 1 << 20, Counter: c, ClearWhenIdle: 5 * time.Minute, ClearWhenIdleBanked: true}, []time.Duration{6 * time.Minute}, []int{rounds}},
		{"banked without a bank", &CompactPolicy{Window: 1 << 20, Counter: c, ClearWhenIdle: 5 * time.Minute, ClearWhenIdleBanked: true, Unbounded: true}, []time.Duration{6 * time.Minute}, []int{defaultCompactClearOldKeepRounds}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := view(tc.p, tc.idles...)
			for i, v := range vs {
				if v.Idle != tc.idles[i] {
					t.Errorf("view %d: Idle %s, want %s from the context", i, v.Idle, tc.idles[i])
				}
				if got := whole(v); got != tc.whole[i] {
					t.Errorf("view %d (idle %s): %d whole results, want %d", i, tc.idles[i], got, tc.whole[i])
				}
			}
		})
	}
}

// TestCompactClearWhenIdleKeepRoundsNegative: a negative
// ClearWhenIdleKeepRounds is refused with an error naming it.
func TestCompactClearWhenIdleKeepRoundsNegative(t *testing.T) {
	p := &CompactPolicy{Window: 1 << 20, ClearWhenIdle: time.Minute, ClearWhenIdleKeepRounds: -1}
	eng, err := harness.NewEngine(&harness.Options{Policies: []harness.ViewPolicy{p}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conv := harness.NewConversation("c")
	turn, err := eng.BeginTurn(ctx, conv, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.View(ctx, conv, turn, nil, false, false); err == nil || !strings.Contains(err.Error(), "ClearWhenIdleKeepRounds -1") {
		t.Errorf("View: err %v, want one naming ClearWhenIdleKeepRounds -1", err)
	}
}

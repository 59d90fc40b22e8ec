package stack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/stack"
)

func TestNewOrderAndOff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    *stack.Config
		guards int
		want   string
	}{
		{"nil is the default", nil, 3, "*policy.StuckPolicy *policy.TurnBudget *policy.CompactPolicy recall"},
		{"zero is the default", &stack.Config{}, 3, "*policy.StuckPolicy *policy.TurnBudget *policy.CompactPolicy recall"},
		{"every part off", &stack.Config{NoCeiling: true, NoRunCeiling: true, NoCollapse: true, NoStuck: true, NoTurnBudget: true, NoCompact: true, NoRecall: true}, 0, ""},
		{"no ceiling keeps the run ceiling and collapse", &stack.Config{NoCeiling: true}, 2,
			"*policy.StuckPolicy *policy.TurnBudget *policy.CompactPolicy recall"},
		{"no run ceiling", &stack.Config{NoRunCeiling: true}, 2, "*policy.StuckPolicy *policy.TurnBudget *policy.CompactPolicy recall"},
		{"no recall", &stack.Config{NoRecall: true}, 3, "*policy.StuckPolicy *policy.TurnBudget *policy.CompactPolicy"},
	} {
		s := stack.New(tc.cfg)
		var parts []string
		for _, p := range s.Policies {
			parts = append(parts, fmt.Sprintf("%T", p))
		}
		for _, tool := range s.Tools {
			parts = append(parts, tool.Spec.Name)
		}
		if got := strings.Join(parts, " "); got != tc.want || len(s.Guards) != tc.guards || s.Recall != strings.Contains(tc.want, "recall") {
			t.Errorf("%s: %d guards, %q (recall %v); want %d, %q", tc.name, len(s.Guards), got, s.Recall, tc.guards, tc.want)
		}
	}
	// Without recall, compaction's placeholders do not name it.
	for _, p := range stack.New(&stack.Config{NoRecall: true}).Policies {
		if c, ok := p.(*policy.CompactPolicy); ok && !c.NoRecall {
			t.Error("compaction points at a recall tool the stack does not offer")
		}
	}
}

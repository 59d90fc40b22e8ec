package compactrules

import (
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
)

// The rules are named as the words marks held before rules had names, so
// a store written then reads with them as it was written.
func TestRulesAreNamedAsTheOldWords(t *testing.T) {
	for _, tc := range []struct {
		rule policy.ClearRule
		want string
	}{
		{ClearFrom(400), "clear-from 400"},
		{KeepPreviews(), "keep-previews"},
		{ClearFrom(0), ""},
	} {
		if tc.rule.Name != tc.want {
			t.Errorf("Name %q, want %q", tc.rule.Name, tc.want)
		}
	}
}

func TestRulesTake(t *testing.T) {
	spilled := harness.TextResult("x")
	spilled.Cuts = []harness.Cut{{Kind: harness.CutSpilled}}
	trimmed := harness.TextResult("x")
	trimmed.Cuts = []harness.Cut{{Kind: harness.CutTrimmed}}
	for _, tc := range []struct {
		name   string
		rule   policy.ClearRule
		res    *harness.ToolResult
		tokens int
		want   bool
	}{
		{"under the size", ClearFrom(400), harness.TextResult("x"), 399, false},
		{"at the size", ClearFrom(400), harness.TextResult("x"), 400, true},
		{"a preview", KeepPreviews(), spilled, 10, false},
		{"another cut", KeepPreviews(), trimmed, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			take, text := tc.rule.Clear(policy.ClearCandidate{Result: tc.res, Tokens: func() int { return tc.tokens }})
			if take != tc.want || text != "" {
				t.Fatalf("took %v, text %q; want %v, none", take, text, tc.want)
			}
		})
	}
}

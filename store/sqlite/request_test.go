package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/storefix"
)

// TestRequestsDamagedStore: a round that refers to a list or a prompt the
// store lost is an error naming it, not a request without tools.
func TestRequestsDamagedStore(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ sql, want string }{
		{`DELETE FROM tool_set_members WHERE pos = 2`, "does not hold whole"},
		{`DELETE FROM tool_sets`, "does not hold whole"},
		{`DELETE FROM system_prompts`, "system prompt"},
		{`UPDATE tool_schemas SET risk = 4096`, "not a set of risk flags"},
	} {
		s := openTemp(t, nil)
		a, err := harness.New(storefix.CallEveryRound("query_entity_01"), &harness.Options{System: "sys", Tools: storefix.GraphQLTools(2), MaxRounds: 1, Recorder: s})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(ctx, harness.NewConversation("c_dmg"), "go"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.w.ExecContext(ctx, c.sql); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Requests(ctx, "c_dmg", 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("after %s: %v", c.sql, err)
		}
	}
}

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogForkLinks: "log list" and "log show" name a fork's parent from
// the store's fork link whatever the fork's id looks like, and "log show"
// reads the link from the fork event of a store a proxy wrote before
// fork links were kept.
func TestLogForkLinks(t *testing.T) {
	cases := []struct {
		name   string
		record func(s store.DB) error
		inList bool
	}{
		{"typed link", func(s store.DB) error {
			return s.AddFork(context.Background(), store.Fork{Conversation: "c_child", Parent: "c_parent", Turn: 2, SharedTurns: 1})
		}, true},
		{"fork event of an old proxy", func(s store.DB) error {
			s.Observe(harness.Event{Kind: harness.EventPolicy, Time: time.Now(), Conversation: "c_child", Turn: 2, Policy: proxy.ForkPolicy,
				Data: map[string]any{"parent": "c_parent", "shared_turns": 1}})
			return nil // stored by Close
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := filepath.Join(t.TempDir(), "harness.db")
			st, err := sqlite.Open(ctx, db, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"c_parent", "c_child"} {
				conv := harness.NewConversation(id)
				conv.Turns = []*harness.Turn{{Index: 1, Input: "t1", Outcome: harness.Answered, Started: time.Now(), Ended: time.Now()}}
				if err := st.Save(ctx, conv); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.record(st); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := inproc(t, "log", "show", "c_child", "--db", db)
			if want := "forked from conversation c_parent at turn 2 (its input); 1 shared turn(s)"; code != 0 || !strings.Contains(stdout, want) {
				t.Errorf("log show: exit %d, want %q in:\n%s%s", code, want, stdout, stderr)
			}
			stdout, stderr, code = inproc(t, "log", "list", "--db", db)
			if code != 0 {
				t.Fatalf("log list: exit %d: %s", code, stderr)
			}
			if got := strings.Contains(stdout, "fork of c_parent at turn 2"); got != tc.inList {
				t.Errorf("log list names the parent: %v, want %v:\n%s", got, tc.inList, stdout)
			}
		})
	}
}

package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// TestForkEventsBecomeLinks opens a database written before fork links
// had a table of their own, whose forks are "proxy-fork" policy events
// (and one event that only mentions the name): the upgrade copies each
// fork's event into its link, once.
func TestForkEventsBecomeLinks(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	old, err := open(ctx, dsn, nil, recordsMigration.Version-1)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	for _, e := range []harness.Event{
		{Kind: harness.EventPolicy, Time: at, Conversation: "c_p-f0123456789ab", Turn: 2, Round: 1, Policy: "proxy-fork",
			Data: map[string]any{"parent": "c_p", "shared_turns": 1}},
		{Kind: harness.EventPolicy, Time: at, Conversation: "c_p-f0123456789ab", Turn: 3, Policy: "proxy-fork",
			Data: map[string]any{"parent": "c_later", "shared_turns": 2}},
		{Kind: harness.EventPolicy, Time: at, Conversation: "c_q", Turn: 1, Policy: "budget", Detail: `"proxy-fork"`},
		{Kind: harness.EventPolicy, Time: at, Conversation: "c_r", Turn: 1, Policy: "proxy-fork"},
	} {
		old.Observe(e)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, dsn)
	forks, err := s.Forks(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(forks) != 1 || forks[0].Conversation != "c_p-f0123456789ab" || forks[0].Parent != "c_p" || forks[0].Turn != 2 ||
		forks[0].Round != 1 || forks[0].SharedTurns != 1 || !forks[0].Time.Equal(at) {
		t.Errorf("fork links after the upgrade: %+v, want c_p-f0123456789ab from c_p at 2.1", forks)
	}
}

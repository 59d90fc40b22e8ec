package storetest

import (
	"context"
	"github.com/agentharness/harness/store/internal/storefix"
	"reflect"
	"testing"
	"time"

	"github.com/agentharness/harness/store"
)

// testForksAndDecisions records fork links and decisions, before and
// after their conversations are stored, and reads them back after a
// reopen: one link per fork (a second is dropped), decisions in the order
// recorded, both gone with their conversation.
func testForksAndDecisions(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	at := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	forks := []store.Fork{
		{Conversation: "c_p-f0123456789ab", Parent: "c_p", Turn: 2, SharedTurns: 1, Time: at},
		{Conversation: "c_q-f0123456789ab", Parent: "c_q", Turn: 3, Round: 2, SharedTurns: 3},
	}
	for _, f := range forks {
		if err := s.AddFork(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddFork(ctx, store.Fork{Conversation: forks[0].Conversation, Parent: "c_other", Turn: 9}); err != nil {
		t.Fatal(err)
	}
	ds := []store.Decision{
		{Turn: 2, Round: 1, CallID: "call_1", Tool: "read_file", ContentSHA256: "ab12", By: "proxy-clear-idle", Text: "[cleared: see /ws/a.txt]",
			Locator: "/ws/a.txt", BytesIn: 4000, BytesOut: 24, Time: at},
		{Turn: 2, Round: 1, CallID: "call_2", Tool: "bash", ContentSHA256: "cd34", By: "proxy-clear-idle", Text: "[cleared]\x00é", BytesIn: 90, BytesOut: 12},
	}
	conv := storefix.RichConversation(forks[0].Conversation, 1000)
	if err := s.AddDecisions(ctx, conv.ID, ds[:1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDecisions(ctx, conv.ID, ds[1:]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDecisions(ctx, conv.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = be.open(t, nil)
	checkRecords(ctx, t, s, "", forks)
	checkRecords(ctx, t, s, forks[1].Conversation, forks[1:])
	checkRecords(ctx, t, s, "c_p", nil)
	got, err := s.Decisions(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Time = got[i].Time.UTC()
	}
	for i := range ds {
		ds[i].Time = ds[i].Time.UTC()
	}
	if !reflect.DeepEqual(got, ds) {
		t.Errorf("decisions read back as %+v, want %+v", got, ds)
	}
	if got, err := s.Decisions(ctx, "c_none"); err != nil || len(got) != 0 {
		t.Errorf("decisions of an unknown conversation: %+v, %v; want none", got, err)
	}
	if err := s.Delete(ctx, conv.ID); err != nil {
		t.Fatal(err)
	}
	checkRecords(ctx, t, s, "", forks[1:])
	if got, err := s.Decisions(ctx, conv.ID); err != nil || len(got) != 0 {
		t.Errorf("decisions of a deleted conversation: %+v, %v; want none", got, err)
	}
}

// checkRecords fails t unless s's fork links of conv are want.
func checkRecords(ctx context.Context, t *testing.T, s store.Store, conv string, want []store.Fork) {
	t.Helper()
	got, err := s.Forks(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Time = got[i].Time.UTC()
	}
	for i := range want {
		want[i].Time = want[i].Time.UTC()
	}
	if len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
		t.Errorf("fork links of %q read back as %+v, want %+v", conv, got, want)
	}
}

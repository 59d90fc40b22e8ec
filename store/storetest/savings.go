package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// testSavings stores savings as a proxy does and reads them back: every
// field byte for byte (a project path with a NUL and invalid UTF-8
// included), oldest first, filtered by time, seen by another store on the
// same database, and kept when their conversation is deleted.
func testSavings(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	log := s
	day := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	want := []store.Saving{
		{At: day, Conversation: "c_sav", Client: "claude-code", Project: "/home/u/app", Model: "claude-sonnet-4-5",
			BytesIn: 90_000, BytesOut: 30_000, TokensSaved: 15_000, Input: 8_000, Cached: 6_000, Output: 300},
		{At: day.Add(time.Hour), Conversation: "c_sav", Client: "codex", Project: "/p/\x00\xff", Model: "gpt-5",
			BytesIn: 10, BytesOut: 10, Input: 5},
		{At: day.Add(24 * time.Hour), Conversation: "c_other", Client: "gemini-cli", Model: "gemini-2.5-pro", TokensSaved: 7},
	}
	// Stored out of order: read back oldest first.
	for _, i := range []int{1, 0, 2} {
		if err := log.AddSaving(ctx, want[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := log.Savings(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Savings = %+v\nwant %+v", got, want)
	}
	if got, err := log.Savings(ctx, day.Add(time.Hour)); err != nil || !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("Savings since the second = %+v (%v), want %+v", got, err, want[1:])
	}
	other := be.open(t, nil)
	if got, err := other.Savings(ctx, time.Time{}); err != nil || len(got) != len(want) {
		t.Errorf("another store on the database reads %d savings (%v), want %d", len(got), err, len(want))
	}
	conv := harness.NewConversation("c_sav")
	conv.Turns = []*harness.Turn{{Index: 1, Input: "hi", Outcome: harness.Answered, Rounds: []*harness.Round{{Index: 1}}}}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "c_sav"); err != nil {
		t.Fatal(err)
	}
	if got, err := log.Savings(ctx, time.Time{}); err != nil || len(got) != len(want) {
		t.Errorf("after deleting the conversation: %d savings (%v), want %d", len(got), err, len(want))
	}
}

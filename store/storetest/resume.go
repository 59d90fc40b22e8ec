package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// textRound is a round whose assistant answers text, no calls.
func textRound(i int, text string) *harness.Round {
	return &harness.Round{Index: i, Usage: harness.Usage{Input: 10 * i, Output: 2},
		Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}}
}

// testResumeTurn: a turn whose writer crashed is continued by another
// store through store.TurnResumer: refused while its writer lives, then
// resumed (reopened if the takeover marked it Interrupted); suspended,
// it is resumed by a third, live store, so the stored turn ends with the
// outcome and usage of its last writer and every round of all of them. A turn that ended, or that a later turn follows,
// cannot be resumed; neither can a turn with another input. A store that
// holds the turn may resume it with another Turn of its index.
func testResumeTurn(t *testing.T, be *Backend) {
	needLocks(t, be)
	ctx := context.Background()
	a, b := be.open(t, nil), be.open(t, nil)
	rb := b
	conv := harness.NewConversation("c_resume")
	turn := &harness.Turn{Index: 1, Input: "durable"}
	if err := a.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := a.AddRound(ctx, conv, turn, textRound(1, "first")); err != nil {
		t.Fatal(err)
	}
	if err := rb.ResumeTurn(ctx, conv, &harness.Turn{Index: 1, Input: "durable"}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("ResumeTurn while the writer lives: %v, want ErrConversationBusy", err)
	}
	crash(t, be, a)
	loaded, err := b.Load(ctx, "c_resume")
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.ResumeTurn(ctx, loaded, &harness.Turn{Index: 1, Input: "other input"}); err == nil || errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("ResumeTurn of a turn with another input: %v", err)
	}
	resumed := loaded.Turns[0]
	if err := rb.ResumeTurn(ctx, loaded, resumed); err != nil {
		t.Fatalf("ResumeTurn after the writer crashed: %v", err)
	}
	if resumed.Outcome != "" || !resumed.Ended.IsZero() {
		t.Fatalf("the resumed turn: outcome %q, ended %v", resumed.Outcome, resumed.Ended)
	}
	if got, err := b.Load(ctx, "c_resume"); err != nil || got.Turns[0].Outcome != "" {
		t.Fatalf("stored after ResumeTurn: %+v, %v", got, err)
	}
	c := be.open(t, nil)
	turnC, onC := handOver(t, b, c, loaded, resumed)
	turnC.Outcome, turnC.Usage = harness.Answered, harness.Usage{Input: 30, Output: 4}
	turnC.Ended = turnC.Started.Add(1)
	if err := c.EndTurn(ctx, onC, turnC); err != nil {
		t.Fatalf("EndTurn of the resumed turn: %v", err)
	}
	got, err := c.Load(ctx, "c_resume")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 1 || len(got.Turns[0].Rounds) != 2 || got.Turns[0].Outcome != harness.Answered || got.Turns[0].Usage != turnC.Usage {
		t.Fatalf("the resumed turn as stored: %d turn(s), %+v", len(got.Turns), got.Turns[0])
	}
	resumeRefused(t, b, got)
}

// handOver checks the turn b resumed: another store c is refused while it
// runs; once b suspends it, c resumes it at once (nothing marks it
// interrupted) and b's own writes are refused. It returns c's Turn and
// conversation.
func handOver(t *testing.T, b, c store.DB, loaded *harness.Conversation, resumed *harness.Turn) (*harness.Turn, *harness.Conversation) {
	t.Helper()
	ctx := context.Background()
	rb := b
	// Another store is refused while the resumed turn runs.
	if err := c.BeginTurn(ctx, loaded, &harness.Turn{Index: 2, Input: "x"}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("BeginTurn during the resumed turn: %v", err)
	}
	if err := b.AddRound(ctx, loaded, resumed, textRound(2, "second")); err != nil {
		t.Fatal(err)
	}
	// b suspends the turn: a live store resumes it at once, nothing marks
	// it interrupted, and b's own writes are refused from then on.
	if err := rb.SuspendTurn(ctx, loaded, resumed); err != nil {
		t.Fatal(err)
	}
	onC, err := c.Load(ctx, "c_resume")
	if err != nil || onC.Turns[0].Outcome != "" || len(onC.Turns[0].Rounds) != 2 {
		t.Fatalf("the suspended turn as stored: %+v, %v", onC, err)
	}
	turnC := onC.Turns[0]
	if err := c.ResumeTurn(ctx, onC, turnC); err != nil {
		t.Fatalf("ResumeTurn of a suspended turn by a live store: %v", err)
	}
	if err := b.AddRound(ctx, loaded, resumed, textRound(3, "late")); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("a round by the store that suspended the turn: %v, want ErrConversationBusy", err)
	}
	return turnC, onC
}

// resumeRefused checks that got's ended turn cannot be resumed, nor a
// turn never begun, and that b resumes its own turn in progress with
// another Turn of its index, after which the earlier turn is refused.
func resumeRefused(t *testing.T, b store.DB, got *harness.Conversation) {
	t.Helper()
	ctx := context.Background()
	rb := b
	if err := rb.ResumeTurn(ctx, got, got.Turns[0]); !errors.Is(err, store.ErrTurnEnded) {
		t.Fatalf("ResumeTurn of a turn that ended: %v, want ErrTurnEnded", err)
	}
	if err := rb.ResumeTurn(ctx, got, &harness.Turn{Index: 2, Input: "never begun"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ResumeTurn of a turn never begun: %v, want ErrNotFound", err)
	}
	// A store resumes its own turn in progress with another Turn of its
	// index; a turn that a later one follows cannot be resumed.
	next := &harness.Turn{Index: 2, Input: "next"}
	if err := b.BeginTurn(ctx, got, next); err != nil {
		t.Fatal(err)
	}
	again := &harness.Turn{Index: 2, Input: "next"}
	if err := rb.ResumeTurn(ctx, got, again); err != nil {
		t.Fatalf("ResumeTurn of the store's own turn: %v", err)
	}
	again.Outcome = harness.Answered
	if err := b.EndTurn(ctx, got, again); err != nil {
		t.Fatal(err)
	}
	if err := rb.ResumeTurn(ctx, got, got.Turns[0]); !errors.Is(err, store.ErrTurnEnded) {
		t.Fatalf("ResumeTurn of turn 1 after turn 2: %v, want ErrTurnEnded", err)
	}
}

// crash makes s look like a process that died mid-turn (Backend.Crash),
// or closes it where the backend cannot.
func crash(t *testing.T, be *Backend, s store.DB) {
	t.Helper()
	if be.Crash != nil {
		be.Crash(t, s)
		return
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

package proxy

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// brokenOnce is a store whose first BeginTurn fails as a connection a
// database restart broke does, while the store answers again.
type brokenOnce struct {
	store.DB
	failed atomic.Bool
}

func (b *brokenOnce) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if b.failed.CompareAndSwap(false, true) {
		return errors.New("begin: write failed: write unix: broken pipe")
	}
	return b.DB.BeginTurn(ctx, conv, turn)
}

// TestRecorderRetriesBrokenWrite: a write that fails while the store
// answers (a connection broken by a restart) is tried again, so the turn
// and its rounds are stored, not the turn lost with every later write.
func TestRecorderRetriesBrokenWrite(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "harness.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := &brokenOnce{DB: st}
	r := newRecorder(b, t.Logf)
	r.probe = func(context.Context) error { return nil } // the store answers
	r.outage, r.back = func(error) {}, func() {}
	turn := harness.Turn{Index: 1, Input: "go"}
	r.add("c1", op{kind: opBegin, turn: turn})
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}}
	turn.Rounds = []*harness.Round{round}
	r.add("c1", op{kind: opRound, turn: turn, round: round})
	if err := r.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !b.failed.Load() {
		t.Fatal("the write never failed: the test shows nothing")
	}
	if n := r.errors(); n != 0 {
		t.Errorf("%d writes failed, want 0", n)
	}
	conv, err := st.Load(context.Background(), "c1")
	if err != nil || len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 1 {
		t.Fatalf("stored %+v (%v); want the turn with its round", conv, err)
	}
}

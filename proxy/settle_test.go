package proxy

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// heldRound is a store whose AddRound waits until release is closed, as
// a write waiting for a database that does not answer does.
type heldRound struct {
	store.DB
	release chan struct{}
}

func (h *heldRound) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	<-h.release
	return h.DB.AddRound(ctx, conv, turn, round)
}

// newHeldRound opens a store whose rounds wait for release, with a
// conversation "c1" whose turn is stored and whose round is queued in
// the returned recorder (held). bound fires settle's bound.
func newHeldRound(t *testing.T) (*heldRound, *recorder, chan time.Time) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "harness.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &heldRound{DB: st, release: make(chan struct{})}
	r := newRecorder(h, t.Logf)
	bound := make(chan time.Time)
	r.after = func(time.Duration) <-chan time.Time { return bound }
	turn := harness.Turn{Index: 1, Input: "go"}
	r.add("c1", op{kind: opBegin, turn: turn})
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("reading")}}}
	turn.Rounds = []*harness.Round{round}
	r.add("c1", op{kind: opRound, turn: turn, round: round})
	// The turn's begin is not held: wait until the store has it (the
	// recorder writes it in its own goroutine), so the test reads back
	// what the store holds, not how fast that goroutine ran.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if conv, err := st.Load(context.Background(), "c1"); err == nil && len(conv.Turns) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn's begin was not stored")
		}
	}
	return h, r, bound
}

// TestLoadSettlesBounded: reading a conversation back waits for its
// queued writes only up to a bound; past it the request goes on with
// what the store holds (the turn, not the round still queued), and the
// queued round is stored once the store takes it. Before, the wait
// lasted as long as the request, so a request for a conversation whose
// writes waited for a database that did not answer waited with them.
func TestLoadSettlesBounded(t *testing.T) {
	h, r, bound := newHeldRound(t)
	c := &conversation{id: "c1", decided: map[string][]*decision{}}
	done := make(chan error, 1)
	go func() { done <- c.load(context.Background(), h, r) }()
	select {
	case err := <-done:
		t.Fatalf("load returned (%v) while a write of the conversation was still held", err)
	case bound <- time.Time{}:
	}
	if err := <-done; err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(c.mirror) != 1 || len(c.mirror[0].Rounds) != 0 {
		t.Fatalf("loaded %d turns; want the stored turn without the held round", len(c.mirror))
	}
	close(h.release)
	if err := r.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	conv, err := h.Load(context.Background(), "c1")
	if err != nil || len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 1 {
		t.Fatalf("stored %+v (%v); want the turn with its round", conv, err)
	}
}

// TestEvictKeepsQueuedWrites: a conversation whose writes are queued is
// not forgotten (it would be read back without them), whatever the bound
// on conversations in memory; once they are written it is.
func TestEvictKeepsQueuedWrites(t *testing.T) {
	h, r, _ := newHeldRound(t)
	p := &Proxy{opts: Options{Store: h}, convs: map[string]*conversation{}, maxConvs: 1, rec: r}
	p.release(p.conversation("c1"))
	p.release(p.conversation("c2"))
	if p.convs["c1"] == nil {
		t.Fatalf("c1 forgotten while its writes were queued")
	}
	close(h.release)
	if err := r.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.release(p.conversation("c3"))
	if p.convs["c1"] != nil {
		t.Errorf("c1 kept once its writes were done (conversations in memory: %d, bound 1)", len(p.convs))
	}
}

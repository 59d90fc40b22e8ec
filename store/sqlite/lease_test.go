package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// openAt opens a second, independent Store (its own *sql.DB handles and
// owner) on path, as another process would.
func openAt(t *testing.T, path string, opts *Options) *sqliteStore {
	t.Helper()
	s, err := open(context.Background(), path, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func turnN(i int) *harness.Turn { return &harness.Turn{Index: i, Input: fmt.Sprint("turn ", i)} }

// TestConversationBusyAcrossWriters: while one writer runs a turn on a
// conversation, another writer (separate handles, as another process)
// cannot begin a turn on it or record into it: ErrConversationBusy, with
// who holds it. Once the turn ends, the other may go on.
func TestConversationBusyAcrossWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "harness.db")
	a, b := openAt(t, path, nil), openAt(t, path, nil)
	conv := harness.NewConversation("c1")
	t1, t2 := turnN(1), turnN(2)
	if err := a.BeginTurn(ctx, conv, t1); err != nil {
		t.Fatal(err)
	}
	// b loaded the conversation after a's turn began: its next turn is 2.
	err := b.BeginTurn(ctx, conv, turnN(2))
	if !errors.Is(err, store.ErrConversationBusy) || !strings.Contains(err.Error(), fmt.Sprint("pid ", os.Getpid())) {
		t.Fatalf("second writer: %v, want ErrConversationBusy naming the holder", err)
	}
	if err := b.AddRound(ctx, conv, turnN(1), &harness.Round{Index: 1}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("AddRound by the second writer: %v", err)
	}
	if err := b.Delete(ctx, "c1"); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("Delete by the second writer: %v", err)
	}
	// Other conversations are not affected.
	if err := b.BeginTurn(ctx, harness.NewConversation("c2"), turnN(1)); err != nil {
		t.Fatal(err)
	}
	// A turn of a's is the turn that a began (or one of its index that
	// resumes it, see TestTurnResumedByAnotherTurnObject), not another.
	if err := a.AddRound(ctx, conv, turnN(2), &harness.Round{Index: 1}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("AddRound of another turn of the holder: %v", err)
	}
	if err := a.AddRound(ctx, conv, t1, &harness.Round{Index: 1}); err != nil {
		t.Fatal(err)
	}
	if err := a.EndTurn(ctx, conv, t1); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginTurn(ctx, conv, t2); err != nil {
		t.Fatalf("after the turn ended: %v", err)
	}
	// Closing a store releases what it holds.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.AddRound(ctx, conv, t2, &harness.Round{Index: 1}); err != nil {
		t.Fatalf("after the holder closed: %v", err)
	}
}

// TestConversationLeaseExpires: a holder that stops writing for longer
// than LeaseTTL loses the conversation to the next writer (here the TTL
// is one nanosecond, so it has expired by the next statement, however
// slow the machine).
func TestConversationLeaseExpires(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "harness.db")
	a, b := openAt(t, path, &Options{LeaseTTL: time.Nanosecond}), openAt(t, path, nil)
	conv := harness.NewConversation("c1")
	t1 := turnN(1)
	if err := a.BeginTurn(ctx, conv, t1); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginTurn(ctx, conv, turnN(2)); err != nil {
		t.Fatalf("expired lease not taken over: %v", err)
	}
	if err := a.AddRound(ctx, conv, t1, &harness.Round{Index: 1}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("the holder that lost its lease still records: %v", err)
	}
}

// TestConversationLeaseOfKilledProcess: a process killed (SIGKILL) in the
// middle of a turn leaves its lease; on the same machine the next writer
// sees the holder's pid is gone and takes the conversation at once.
func TestConversationLeaseOfKilledProcess(t *testing.T) {
	if os.Getenv("HARNESS_LEASE_CHILD") != "" {
		leaseChild()
		return
	}
	path := filepath.Join(t.TempDir(), "harness.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestConversationLeaseOfKilledProcess$")
	cmd.Env = append(os.Environ(), "HARNESS_LEASE_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "holding") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	ctx := context.Background()
	s := openAt(t, path, nil)
	conv := harness.NewConversation("c1")
	if err := s.BeginTurn(ctx, conv, turnN(2)); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("while the child lives: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := s.BeginTurn(ctx, conv, turnN(2)); err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	// The turn the killed process left unended is marked on takeover.
	loaded, err := s.Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Turns[0].Outcome; got != store.Interrupted || loaded.Turns[0].Ended.IsZero() {
		t.Fatalf("turn 1: outcome %q, ended %v", got, loaded.Turns[0].Ended)
	}
	if got := loaded.Turns[1].Outcome; got != "" {
		t.Fatalf("the new turn is marked too: %q", got)
	}
}

// leaseChild begins a turn, says so, and waits to be killed.
func leaseChild() {
	s, err := Open(context.Background(), os.Getenv("HARNESS_LEASE_CHILD"), nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if err := s.BeginTurn(context.Background(), harness.NewConversation("c1"), turnN(1)); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("holding")
	select {}
}

// TestTurnResumedByAnotherTurnObject: a writer that reloaded a running
// turn (another Turn of the same index, as a restarted proxy has) goes on
// recording it, while a turn whose own BeginTurn was refused stays refused.
func TestTurnResumedByAnotherTurnObject(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "h.db"), nil)
	conv := harness.NewConversation("c_resume")
	first := turnN(1)
	if err := s.BeginTurn(ctx, conv, first); err != nil {
		t.Fatal(err)
	}
	refused := turnN(1)
	if err := s.BeginTurn(ctx, conv, refused); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("second BeginTurn: %v, want busy", err)
	}
	resumed := turnN(1)
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("ok")}}}
	if err := s.AddRound(ctx, conv, resumed, round); err != nil {
		t.Fatalf("the resumed turn's round: %v", err)
	}
	refused.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, refused); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("EndTurn of the refused turn: %v, want busy", err)
	}
	resumed.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, resumed); err != nil {
		t.Fatalf("EndTurn of the resumed turn: %v", err)
	}
	got, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 1 || len(got.Turns[0].Rounds) != 1 || got.Turns[0].Outcome != harness.Answered {
		t.Fatalf("stored %d turns, want one answered turn with one round", len(got.Turns))
	}
}

// TestResumeInterruptedTurn: a takeover by a plain writer (here a note
// after the holder's lease expired) stores the holder's turn as
// Interrupted, as a restart always has; ResumeTurn then reopens it for
// its new writer, which ends it with its own outcome. A turn that ended
// on its own stays ended.
func TestResumeInterruptedTurn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "harness.db")
	a, b := openAt(t, path, &Options{LeaseTTL: time.Nanosecond}), openAt(t, path, nil)
	conv := harness.NewConversation("c1")
	if err := a.BeginTurn(ctx, conv, turnN(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNote(ctx, conv, &harness.Note{Text: "n"}); err != nil {
		t.Fatal(err)
	}
	loaded, err := b.Load(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	turn := loaded.Turns[0]
	if turn.Outcome != store.Interrupted || turn.Ended.IsZero() {
		t.Fatalf("after the takeover: outcome %q, ended %v", turn.Outcome, turn.Ended)
	}
	if err := b.ResumeTurn(ctx, loaded, turn); err != nil {
		t.Fatal(err)
	}
	if turn.Outcome != "" || !turn.Ended.IsZero() {
		t.Fatalf("the resumed Turn: outcome %q, ended %v", turn.Outcome, turn.Ended)
	}
	turn.Outcome = harness.Answered
	if err := b.EndTurn(ctx, loaded, turn); err != nil {
		t.Fatal(err)
	}
	got, err := b.Load(ctx, "c1")
	if err != nil || got.Turns[0].Outcome != harness.Answered {
		t.Fatalf("after the resumed turn ended: %+v, %v", got, err)
	}
	if err := b.ResumeTurn(ctx, got, got.Turns[0]); !errors.Is(err, store.ErrTurnEnded) {
		t.Fatalf("resuming an answered turn: %v", err)
	}
}

package postgres

import (
	"context"
	"errors"
	"github.com/agentharness/harness/store/internal/storefix"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

func openTest(t *testing.T, dsn string) *pgStore {
	t.Helper()
	s, err := open(context.Background(), dsn, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// exec runs sql on a connection of its own.
func exec(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	c := connect(t, dsn)
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// connect opens a connection to dsn; the caller closes it.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"postgres://u:pw-123@[::1/x", "host=/nonexistent/socket user=u password=pw-123 dbname=x connect_timeout=5", "postgres://u:pw-123@localhost:notaport/x"} {
		_, err := Open(ctx, dsn, nil)
		if err == nil || strings.Contains(err.Error(), "pw-123") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
	dsn := server.DSN(t)
	s := openTest(t, dsn)
	if p := s.Path(); !strings.HasPrefix(p, "postgres://harness@/") || !strings.Contains(p, "host=") {
		t.Errorf("Path() = %q", p)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dsn := server.DSN(t)
	openTest(t, dsn)
	exec(t, dsn, `INSERT INTO schema_migrations (version, name, applied_ns) VALUES (99, 'future', 0)`)
	if _, err := Open(context.Background(), dsn, nil); err == nil || !strings.Contains(err.Error(), "newer than this harness") {
		t.Errorf("opening a newer schema: %v", err)
	}
}

// TestOpenAtOnce opens one new database from six stores at once: the
// schema is created once and every store works.
func TestOpenAtOnce(t *testing.T) {
	dsn := server.DSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			s, err := Open(context.Background(), dsn, nil)
			if err == nil {
				_, err = s.List(context.Background())
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := count(t, dsn, "schema_migrations", ""); n != schemaVersion() {
		t.Errorf("%d migrations recorded, want %d", n, schemaVersion())
	}
}

// TestTurnConnectionLost kills the connection of a turn in progress, as
// when its process dies: the server releases the conversation's lock, so
// another store takes the next turn; the dead turn's writes fail with an
// error and leave nothing half-written.
func TestTurnConnectionLost(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	a, b := openTest(t, dsn), openTest(t, dsn)
	conv := harness.NewConversation("c_lost")
	turn := &harness.Turn{Index: 1, Input: "dies"}
	if err := a.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginTurn(ctx, harness.NewConversation("c_lost"), &harness.Turn{Index: 1}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("BeginTurn while the turn lives: %v", err)
	}
	pid := a.turnOf("c_lost", nil).conn.Conn().PgConn().PID()
	exec(t, dsn, `SELECT pg_terminate_backend($1)`, int32(pid))
	round := storefix.BenchRound(1, 1)
	if err := a.AddRound(ctx, conv, turn, round); err == nil {
		t.Error("a round written on a dead connection did not fail")
	}
	if err := a.EndTurn(ctx, conv, turn); err == nil {
		t.Error("the end of a turn on a dead connection did not fail")
	}
	loaded, err := b.Load(ctx, "c_lost")
	if err != nil || len(loaded.Turns) != 1 || len(loaded.Turns[0].Rounds) != 0 || loaded.Turns[0].Outcome != "" {
		t.Fatalf("after the connection died: %+v, %v", loaded, err)
	}
	if n := count(t, dsn, "results", "c_lost"); n != 0 {
		t.Errorf("%d results of the dead turn stored", n)
	}
	if _, err := storefix.NewAgent(t, b, storefix.ToolModel(nil, nil)).Run(ctx, loaded, "next"); err != nil {
		t.Fatalf("the next turn, in another store: %v", err)
	}
}

// TestServerRestartMidTurn restarts the server during a turn: the turn's
// next write fails with an error naming the lost connection, nothing of it
// is half-written, and the store serves the conversation again once the
// server is back (the pool reconnects).
func TestServerRestartMidTurn(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	s := openTest(t, dsn)
	conv := harness.NewConversation("c_restart")
	a := storefix.NewAgent(t, s, storefix.ToolModel(nil, nil))
	if _, err := a.Run(ctx, conv, "before"); err != nil {
		t.Fatal(err)
	}
	turn := &harness.Turn{Index: 2, Input: "during"}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	err := s.AddRound(ctx, conv, turn, storefix.BenchRound(2, 1))
	if err == nil {
		t.Fatal("a round written across a server restart did not fail")
	}
	t.Logf("the round's error: %v", err)
	if err := s.EndTurn(ctx, conv, turn); err == nil {
		t.Error("the end of the turn across a restart did not fail")
	}
	loaded, err := s.Load(ctx, "c_restart")
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Turns) != 2 || len(loaded.Turns[1].Rounds) != 0 || loaded.Turns[0].Outcome != harness.Answered || len(loaded.Turns[0].Rounds) != 2 {
		t.Fatalf("after the restart: %d turns", len(loaded.Turns))
	}
	if n := count(t, dsn, "rounds", "c_restart"); n != 2 {
		t.Errorf("%d rounds stored, want the first turn's 2", n)
	}
	if _, err := a.Run(ctx, loaded, "after"); err != nil {
		t.Fatalf("a turn after the restart: %v", err)
	}
}

// TestResumeAfterServerRestart restarts the server in the middle of a
// turn, as a durable turn's worker meets it: the turn's connection broke
// and its lock went with it, so ResumeTurn takes the lock again on a new
// connection, and the turn goes on and ends with every round it wrote
// before and after, nothing half-written.
func TestResumeAfterServerRestart(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	s := openTest(t, dsn)
	conv := harness.NewConversation("c_resume_restart")
	turn := &harness.Turn{Index: 1, Input: "across a restart"}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRound(ctx, conv, turn, storefix.BenchRound(1, 1)); err != nil {
		t.Fatal(err)
	}
	old := s.turnOf(conv.ID, turn).conn.Conn().PgConn().PID()
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.ResumeTurn(ctx, conv, turn); err != nil {
		t.Fatalf("ResumeTurn after the restart: %v", err)
	}
	if pid := s.turnOf(conv.ID, turn).conn.Conn().PgConn().PID(); pid == old {
		t.Fatalf("the turn still writes through session %d, which the restart ended", pid)
	}
	// Another store cannot take the conversation: the lock is held again.
	if err := openTest(t, dsn).BeginTurn(ctx, harness.NewConversation(conv.ID), &harness.Turn{Index: 2}); !errors.Is(err, store.ErrConversationBusy) {
		t.Fatalf("BeginTurn in another store after the resume: %v", err)
	}
	if err := s.AddRound(ctx, conv, turn, storefix.BenchRound(1, 2)); err != nil {
		t.Fatal(err)
	}
	turn.Outcome = harness.Answered
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Turns) != 1 || len(loaded.Turns[0].Rounds) != 2 || loaded.Turns[0].Outcome != harness.Answered {
		t.Fatalf("after the resumed turn: %d turn(s), %+v", len(loaded.Turns), loaded.Turns[0])
	}
}

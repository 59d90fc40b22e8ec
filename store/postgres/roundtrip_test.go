package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// roundTrips counts the round trips a pool's connections make: a query
// or statement sent alone is one, a batch is one whatever it holds.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestRoundTrips counts the round trips to the server of what a proxy
// replica does on its requests' path, or on the path the next replica's
// request waits for. Load reads a conversation of several turns, rounds,
// results and cuts in one, with the same content as the store wrote, and
// refuses a missing conversation as store.ErrNotFound in one too;
// Decisions and Forks take one each. Resuming a turn another writer
// suspended takes three (the lock, then the check of the turn with its
// BEGIN, then the COMMIT), a request one, a round one, suspending one.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	dsn := server.DSN(t)
	s, err := open(ctx, dsn, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conv := harness.NewConversation("rt")
	for ti := 1; ti <= 2; ti++ {
		turn := &harness.Turn{Index: ti, Input: "task"}
		for ri := 1; ri <= 3; ri++ {
			res := &harness.ToolResult{CallID: "c", Tool: "Bash", Parts: []harness.Part{harness.TextPart("full output")},
				Model: []harness.Part{harness.TextPart("cut")}, Cuts: []harness.Cut{{Kind: harness.CutSpilled, By: "ceiling", BytesIn: 11, BytesOut: 3, Locator: "/spill/x"}}}
			turn.Rounds = append(turn.Rounds, &harness.Round{Index: ri, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("reading")}}, Results: []*harness.ToolResult{res}})
		}
		turn.Outcome = harness.Answered
		conv.Turns = append(conv.Turns, turn)
	}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDecisions(ctx, "rt", []store.Decision{{Turn: 1, Round: 2, CallID: "c", Tool: "Bash", ContentSHA256: "00", By: "idle-clear", Text: "cleared"}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.ConnConfig.Tracer = rt
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.reads.Close()
	s.reads = traced
	writePool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.pool.Close()
	s.pool = writePool
	turn3 := &harness.Turn{Index: 3, Input: "more"}
	if err := s.BeginTurn(ctx, conv, turn3); err != nil {
		t.Fatal(err)
	}
	if err := s.SuspendTurn(ctx, conv, turn3); err != nil {
		t.Fatal(err)
	}
	round := 0
	tests := []struct {
		name string
		read func() error
		want int64
	}{
		{"Load", func() error {
			got, err := s.Load(ctx, "rt")
			if err != nil {
				return err
			}
			if len(got.Turns) != 3 || len(got.Turns[1].Rounds) != 3 || len(got.Turns[1].Rounds[2].Results) != 1 {
				return fmt.Errorf("loaded %d turns, want 3, the first two of 3 rounds with a result each", len(got.Turns))
			}
			if r := got.Turns[1].Rounds[2].Results[0]; r.ModelText() != "cut" || len(r.Cuts) != 1 || r.Cuts[0].Locator != "/spill/x" {
				return fmt.Errorf("loaded result: model %q, cuts %+v", r.ModelText(), r.Cuts)
			}
			return nil
		}, 1},
		{"Load of a missing conversation", func() error {
			if _, err := s.Load(ctx, "nothing"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("got %v, want store.ErrNotFound", err)
			}
			return nil
		}, 1},
		{"Decisions", func() error {
			ds, err := s.Decisions(ctx, "rt")
			if err == nil && len(ds) != 1 {
				err = fmt.Errorf("%d decisions, want 1", len(ds))
			}
			return err
		}, 1},
		{"Forks", func() error { _, err := s.Forks(ctx, "rt"); return err }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(); err != nil { // prepares the statements
				t.Fatal(err)
			}
			rt.n.Store(0)
			if err := tt.read(); err != nil {
				t.Fatal(err)
			}
			if n := rt.n.Load(); n != tt.want {
				t.Errorf("%d round trips, want %d", n, tt.want)
			}
		})
	}
	// What a replica writes for a round of a turn another writer
	// suspended: the lock, the check of the turn with its BEGIN, the
	// COMMIT; the request with its system prompt and tool list; the
	// round; the unlock. Twice: the first prepares the statements.
	tools := []harness.ToolSpec{{Name: "Bash", Description: "run"}, {Name: "Read", Description: "read"}}
	writes := []struct {
		name  string
		write func() error
		want  int64
	}{
		{"ResumeTurn", func() error { return s.ResumeTurn(ctx, conv, turn3) }, 3},
		{"AddRequest", func() error {
			return s.AddRequest(ctx, conv, turn3, &harness.Request{Turn: 3, Round: round + 1, System: "sys", Tools: tools})
		}, 1},
		{"AddRound", func() error {
			round++
			return s.AddRound(ctx, conv, turn3, &harness.Round{Index: round})
		}, 1},
		{"SuspendTurn", func() error { return s.SuspendTurn(ctx, conv, turn3) }, 1},
	}
	for pass := range 2 {
		for _, w := range writes {
			rt.n.Store(0)
			if err := w.write(); err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			if n := rt.n.Load(); pass == 1 && n != w.want {
				t.Errorf("%s: %d round trips, want %d", w.name, n, w.want)
			}
		}
	}
}

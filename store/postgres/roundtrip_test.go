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

// TestReadsOneRoundTrip: Load reads a conversation of several turns,
// rounds, results and cuts in one round trip to the server (the read
// pool's), with the same content as the store wrote, and refuses a
// missing conversation as store.ErrNotFound in one too; Decisions and
// Forks take one each. A proxy replica makes these reads on its
// requests' path (Load whenever another replica advanced the
// conversation).
func TestReadsOneRoundTrip(t *testing.T) {
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
	tests := []struct {
		name string
		read func() error
	}{
		{"Load", func() error {
			got, err := s.Load(ctx, "rt")
			if err != nil {
				return err
			}
			if len(got.Turns) != 2 || len(got.Turns[1].Rounds) != 3 || len(got.Turns[1].Rounds[2].Results) != 1 {
				return fmt.Errorf("loaded %d turns, want 2 of 3 rounds with a result each", len(got.Turns))
			}
			if r := got.Turns[1].Rounds[2].Results[0]; r.ModelText() != "cut" || len(r.Cuts) != 1 || r.Cuts[0].Locator != "/spill/x" {
				return fmt.Errorf("loaded result: model %q, cuts %+v", r.ModelText(), r.Cuts)
			}
			return nil
		}},
		{"Load of a missing conversation", func() error {
			if _, err := s.Load(ctx, "nothing"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("got %v, want store.ErrNotFound", err)
			}
			return nil
		}},
		{"Decisions", func() error {
			ds, err := s.Decisions(ctx, "rt")
			if err == nil && len(ds) != 1 {
				err = fmt.Errorf("%d decisions, want 1", len(ds))
			}
			return err
		}},
		{"Forks", func() error { _, err := s.Forks(ctx, "rt"); return err }},
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
			if n := rt.n.Load(); n != 1 {
				t.Errorf("%d round trips, want 1", n)
			}
		})
	}
}

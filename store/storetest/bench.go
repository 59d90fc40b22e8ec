package storetest

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// Bench measures appending rounds through the store API, the same way for
// every backend: "Round" records one round of ten results (BenchRound)
// with its request (a system prompt and 20 tool schemas, stored once) in
// turns of 8 rounds, on one conversation; "RoundParallel" does the same
// from GOMAXPROCS goroutines at once, each on its own conversation.
// Both report rounds/s.
func Bench(b *testing.B, newBackend func(tb testing.TB) *Backend) {
	tools := storefix.Specs(storefix.GraphQLTools(20))
	b.Run("Round", func(b *testing.B) {
		s := newBackend(b).Open(b, nil)
		w := &appender{s: s, conv: harness.NewConversation("c_bench"), tools: tools}
		for b.Loop() {
			if err := w.next(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
	})
	b.Run("RoundParallel", func(b *testing.B) {
		s := newBackend(b).Open(b, nil)
		var n atomic.Int64
		b.ResetTimer() // not the database's creation
		b.RunParallel(func(pb *testing.PB) {
			w := &appender{s: s, conv: harness.NewConversation(fmt.Sprintf("c_bench_%d", n.Add(1))), tools: tools}
			for pb.Next() {
				if err := w.next(context.Background()); err != nil {
					b.Error(err)
					return
				}
			}
			if err := w.close(context.Background()); err != nil {
				b.Error(err)
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
	})
}

// appender records BenchRounds into one conversation, 8 per turn.
type appender struct {
	s     store.Store
	conv  *harness.Conversation
	turn  *harness.Turn
	tools []harness.ToolSpec
}

func (a *appender) next(ctx context.Context) error {
	if a.turn == nil {
		a.turn = &harness.Turn{Index: len(a.conv.Turns) + 1, Input: "bench"}
		a.conv.Turns = append(a.conv.Turns, a.turn)
		if err := a.s.BeginTurn(ctx, a.conv, a.turn); err != nil {
			return err
		}
	}
	r := storefix.BenchRound(a.turn.Index, len(a.turn.Rounds)+1)
	req := &harness.Request{System: "You are a benchmark.", Tools: a.tools, Turn: a.turn.Index, Round: r.Index}
	if err := a.s.AddRequest(ctx, a.conv, a.turn, req); err != nil {
		return err
	}
	if err := a.s.AddRound(ctx, a.conv, a.turn, r); err != nil {
		return err
	}
	a.turn.Rounds = append(a.turn.Rounds, &harness.Round{Index: r.Index}) // only the count matters
	if len(a.turn.Rounds) == 8 {
		return a.close(ctx)
	}
	return nil
}

func (a *appender) close(ctx context.Context) error {
	if a.turn == nil {
		return nil
	}
	t := a.turn
	a.turn = nil
	t.Outcome = harness.Answered
	return a.s.EndTurn(ctx, a.conv, t)
}

package sqlite

import (
	"context"
	"fmt"
	"github.com/agentharness/harness/store/internal/storefix"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
)

// longConversation has turns × rounds rounds of ten results each, every
// fifth one cut by a guard (its payload 20 KB, its model copy 2 KB).
func longConversation(id string, turns, rounds int) *harness.Conversation {
	conv := &harness.Conversation{ID: id}
	for ti := 1; ti <= turns; ti++ {
		t := &harness.Turn{Index: ti, Input: fmt.Sprintf("question %d", ti), Outcome: harness.Answered}
		for ri := 1; ri <= rounds; ri++ {
			t.Rounds = append(t.Rounds, storefix.BenchRound(ti, ri))
		}
		t.Rounds = append(t.Rounds, &harness.Round{Index: rounds + 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("answer")}}})
		conv.Turns = append(conv.Turns, t)
	}
	return conv
}

// BenchmarkResume1000Rounds loads a conversation of 1,000 tool rounds and
// 10,000 results (100 turns × 10 rounds) and builds the next request's view
// with the turn budget: what "harness run --conversation ID" costs before
// its first model call.
func BenchmarkResume1000Rounds(b *testing.B) {
	ctx := context.Background()
	s := openTemp(b, nil)
	conv := longConversation("c_long", 100, 10)
	if err := s.Save(ctx, conv); err != nil {
		b.Fatal(err)
	}
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Load(ctx, "c_long"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LoadFull", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.LoadFull(ctx, "c_long"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load+View", func(b *testing.B) {
		budget := &policy.TurnBudget{}
		for b.Loop() {
			c, err := s.Load(ctx, "c_long")
			if err != nil {
				b.Fatal(err)
			}
			v := harness.BuildView(c, c.LastTurn(), "system", nil, true)
			if err := budget.ApplyView(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.List(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRecordRound measures AddRound of a round of ten results.
func BenchmarkRecordRound(b *testing.B) {
	ctx := context.Background()
	s := openTemp(b, nil)
	conv := longConversation("c_rec", 1, 1)
	turn := conv.Turns[0]
	round := turn.Rounds[0]
	live := harness.NewConversation("c_rec")
	i := 0
	for b.Loop() {
		i++
		t := &harness.Turn{Index: i, Input: "q"}
		if err := s.BeginTurn(ctx, live, t); err != nil {
			b.Fatal(err)
		}
		if err := s.AddRound(ctx, live, t, round); err != nil {
			b.Fatal(err)
		}
		if err := s.EndTurn(ctx, live, t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordRound84Tools measures AddRequest and AddRound of a round
// whose request sent 84 tool schemas, the list already stored by an
// earlier round (the common case: a turn's rounds share their list),
// beside the same round recorded without its request.
func BenchmarkRecordRound84Tools(b *testing.B) {
	tools := storefix.Specs(storefix.GraphQLTools(84))
	for _, withRequest := range []bool{true, false} {
		b.Run(map[bool]string{true: "request", false: "no-request"}[withRequest], func(b *testing.B) {
			ctx := context.Background()
			s := openTemp(b, nil)
			live := harness.NewConversation("c_rec84")
			t := &harness.Turn{Index: 1, Input: "q"}
			if err := s.BeginTurn(ctx, live, t); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				if withRequest {
					req := &harness.Request{System: "You query the API.", Tools: tools, Turn: 1, Round: i}
					if err := s.AddRequest(ctx, live, t, req); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.AddRound(ctx, live, t, &harness.Round{Index: i, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

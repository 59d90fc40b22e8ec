package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// benchConversation has turns × rounds rounds of ten results each, from a
// few hundred characters to 12,000.
func benchConversation(turns, rounds int) *harness.Conversation {
	conv := harness.NewConversation("c_bench")
	for ti := 1; ti <= turns; ti++ {
		t := &harness.Turn{Index: ti, Input: fmt.Sprintf("question %d", ti)}
		for ri := 1; ri <= rounds; ri++ {
			r := &harness.Round{Index: ri, Assistant: harness.Message{Role: harness.RoleAssistant}}
			for ci := 1; ci <= 10; ci++ {
				id := fmt.Sprintf("call_t%d_r%d_%d", ti, ri, ci)
				r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "read"})
				n := 300 + (ti*7919+ri*104729+ci*1299709)%12_000
				r.Results = append(r.Results, &harness.ToolResult{CallID: id, Tool: "read", Parts: []harness.Part{harness.TextPart(strings.Repeat("x", n))}})
			}
			t.Rounds = append(t.Rounds, r)
		}
		conv.Turns = append(conv.Turns, t)
	}
	return conv
}

// BenchmarkTurnBudgetView builds the final request's view of a 1,000-round
// conversation with 10,000 results and applies the turn budget: once with
// all 1,000 rounds in the current turn (10,000 results water-filled and
// 10,000 trimmed), once as 100 turns of 10 rounds (100 in the budget).
func BenchmarkTurnBudgetView(b *testing.B) {
	for _, shape := range []struct{ turns, rounds int }{{1, 1000}, {100, 10}} {
		conv := benchConversation(shape.turns, shape.rounds)
		turn := conv.LastTurn()
		b.Run(fmt.Sprintf("turns=%d/rounds=%d", shape.turns, shape.rounds), func(b *testing.B) {
			b.ReportAllocs()
			budget := &TurnBudget{}
			ctx := context.Background()
			var v *harness.View
			for b.Loop() {
				v = harness.BuildView(conv, turn, "system", nil, true)
				if err := budget.ApplyView(ctx, v); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			evidence := 0
			for _, s := range turnEvidence(v) {
				evidence += s
			}
			b.ReportMetric(float64(evidence), "turn-evidence-chars")
		})
	}
	b.Run("BuildViewOnly/turns=1/rounds=1000", func(b *testing.B) {
		conv := benchConversation(1, 1000)
		b.ReportAllocs()
		for b.Loop() {
			harness.BuildView(conv, conv.LastTurn(), "system", nil, true)
		}
	})
}

package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/scripted"
)

// The seed's case with the budget decided on arrival: seven rounds each
// read one 8,000-character article and the model answers on its own in
// round eight, tools still offered. Each request shows the article just
// read whole; the answer request stays within the 24,000-character budget
// (56,000 without it).
func ExampleTurnBudget_onArrival() {
	var steps []scripted.Step
	for i := range 7 {
		steps = append(steps, scripted.Step{ToolCalls: []scripted.Call{{Name: "get_article", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}}})
	}
	steps = append(steps, scripted.Step{Text: "Posts 1, 3 and 5 do not mention it."})
	get := harness.Tool{
		Spec: harness.ToolSpec{Name: "get_article", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(strings.Repeat("x", 8000)), nil
		},
	}
	agent, _ := harness.New(scripted.New(&scripted.Script{Steps: steps}, nil), &harness.Options{
		Tools:    []harness.Tool{get},
		Policies: []harness.ViewPolicy{&policy.TurnBudget{When: policy.OnArrival}},
	})
	res, _ := agent.Run(context.Background(), harness.NewConversation(""), "Which of my posts does not mention offline sync yet?")
	var evidence []string // characters of results in each request
	for _, r := range res.Turn.Rounds {
		evidence = append(evidence, fmt.Sprint(r.Stats.EvidenceChars))
	}
	fmt.Println(strings.Join(evidence, " "))
	fmt.Println(res.Outcome, res.Answer)
	// Output:
	// 0 8000 16000 17200 18400 19600 20800 22000
	// answered Posts 1, 3 and 5 do not mention it.
}

package policy_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/scripted"
)

// A model that repeats one call is nudged after 3 identical rounds and
// stopped after 6; the synthesis call answers without tools.
func ExampleStuckPolicy() {
	var steps []scripted.Step
	for range 6 {
		steps = append(steps, scripted.Step{ToolCalls: []scripted.Call{{Name: "status", Args: json.RawMessage(`{"job":7}`)}}})
	}
	steps = append(steps, scripted.Step{Text: "Job 7 is still pending."})
	status := harness.Tool{
		Spec: harness.ToolSpec{Name: "status", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("pending"), nil
		},
	}
	agent, _ := harness.New(scripted.New(&scripted.Script{Steps: steps}, nil), &harness.Options{
		Tools:     []harness.Tool{status},
		MaxRounds: 10,
		Policies:  []harness.ViewPolicy{&policy.StuckPolicy{NudgeAfter: 3, AbortAfter: 6}},
	})
	res, _ := agent.Run(context.Background(), harness.NewConversation(""), "Is job 7 done?")
	fmt.Println(res.Outcome, res.ToolRounds, res.Answer)
	// Output: stuck 6 Job 7 is still pending.
}

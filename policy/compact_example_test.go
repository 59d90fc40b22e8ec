package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
)

// Old tool results are cleared to placeholders once the request passes
// 75% of the window; the newest three rounds keep theirs. The policy is
// Unbounded here because it sees this conversation for the first time: its
// savings bank, which has booked no request of it yet, would hold the
// clear back until the request no longer fits the window.
func ExampleCompactPolicy() {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "Summarise the logs."}
	for r := 1; r <= 5; r++ {
		id := fmt.Sprintf("call_%d", r)
		res := harness.TextResult(strings.Repeat("log line ", 400))
		res.CallID, res.Tool, res.Bytes = id, "read", 3600
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: r,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "read", Args: json.RawMessage(fmt.Sprintf(`{"path":"log%d"}`, r))}}},
			Results:   []*harness.ToolResult{res}})
	}
	conv.Turns = append(conv.Turns, turn)

	v := harness.BuildView(conv, turn, "", nil, false)
	policy := &policy.CompactPolicy{HighWater: 0.75, Target: 0.55, Window: 5000, Unbounded: true}
	if err := policy.ApplyView(context.Background(), v); err != nil {
		fmt.Println(err)
		return
	}
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && len(v.Origins[i].Cuts) > 0 {
			fmt.Println(m.Text())
		}
	}
	// Output:
	// [cleared to save context: the result of read {"path":"log1"} (call call_1, 3600 bytes). To see it again, call recall with {"call_id":"call_1"}.]
	// [cleared to save context: the result of read {"path":"log2"} (call call_2, 3600 bytes). To see it again, call recall with {"call_id":"call_2"}.]
}

package guard_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// A command's output is shown whole in the request after the call; once
// the model has replied to it, later requests show a digest (head, tail
// and the way back), which costs one re-send of the digest instead of a
// tenth of the whole output on every later request.
func ExampleSettle() {
	var out strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&out, "Collecting package-%d\n", i)
	}
	out.WriteString("Successfully installed 200 packages\n")

	conv := harness.NewConversation("example")
	turn := &harness.Turn{Index: 1, Input: "set up the project"}
	conv.Turns = append(conv.Turns, turn)
	for r, cmd := range []string{"pip install -e .", "pytest -x"} {
		id := fmt.Sprintf("call_%d", r+1)
		text := out.String()
		if r == 1 {
			text = "1 passed\n"
		}
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: r + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant,
				ToolCalls: []harness.ToolCall{{ID: id, Name: "shell", Args: []byte(fmt.Sprintf(`{"command":%q}`, cmd))}}},
			Results: []*harness.ToolResult{harness.TextResult(text)}})
		turn.Rounds[r].Results[0].CallID = id
	}

	v := harness.BuildView(conv, turn, "", nil, false)
	if err := (&guard.Settle{Head: 64, Tail: 64}).ApplyView(context.Background(), v); err != nil {
		panic(err)
	}
	for _, m := range v.Messages {
		if m.Role == harness.RoleTool {
			fmt.Printf("%s (%d bytes):\n%s\n", m.ToolCallID, len(m.Text()), m.Text())
		}
	}
	// Output:
	// call_1 (290 bytes):
	// Collecting package-1
	// Collecting package-2
	// Collecting package-3
	// [settled: this output was shown to you whole once; 4406 bytes (196 lines) of its middle are left out here. To see it all again, call recall with {"call_id":"call_1"}.]
	// Collecting package-200
	// Successfully installed 200 packages
	//
	// call_2 (9 bytes):
	// 1 passed
}

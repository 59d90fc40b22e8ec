package benchcore_test

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/benchcore"
	"github.com/agentharness/harness/replay"
)

// A run whose one build log outweighs everything else it read is
// output-heavy; the same log among many file reads of its size is not.
func ExampleWeigh() {
	run := func(sizes ...int) *replay.Recording {
		turn := &replay.Turn{Input: "fix the build"}
		for i, n := range sizes {
			id := fmt.Sprint("call_", i)
			turn.Calls = append(turn.Calls, &replay.Call{
				Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: []byte(`{"command":"make"}`)}}},
				Results:   []*replay.Result{{CallID: id, Full: []harness.Part{harness.TextPart(strings.Repeat("x", n))}}},
			})
		}
		return &replay.Recording{ID: "example", Turns: []*replay.Turn{turn}}
	}
	for _, rec := range []*replay.Recording{run(1_200, 150_000, 800), run(30_000, 30_000, 30_000, 30_000)} {
		w := benchcore.Weigh(rec)
		fmt.Printf("largest %d of %d chars (%.1f%%): output-heavy %v\n", w.LargestChars, w.ResultChars, 100*w.LargestShare, w.OutputHeavy)
	}
	// Output:
	// largest 150000 of 152000 chars (98.7%): output-heavy true
	// largest 30000 of 120000 chars (25.0%): output-heavy false
}

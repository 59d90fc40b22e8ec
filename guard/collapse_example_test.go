package guard_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// An agent reads lines 1-30 of a file, then lines 21-40: the ten lines it
// already holds reach the model as one marker line; the transcript keeps
// the second read whole.
func ExampleCollapse() {
	var file []string
	for i := 1; i <= 40; i++ {
		file = append(file, fmt.Sprintf("%4d  total += price[%d] * quantity[%d]", i, i, i))
	}
	read := func(from, to int) string { return strings.Join(file[from-1:to], "\n") }

	conv := harness.NewConversation("c")
	first := &harness.ToolResult{CallID: "call_1", Tool: "bash", Parts: []harness.Part{harness.TextPart(read(1, 30))}}
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{{Index: 1, Results: []*harness.ToolResult{first}}}}}

	tool := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(read(21, 40)), nil
	}, (&guard.Collapse{}).Guard())
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 2, Transcript: conv})
	res, err := tool(ctx, &harness.ToolCall{ID: "call_2", Name: "bash"})
	if err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.Split(res.ModelText(), "\n")
	fmt.Println(lines[0])
	fmt.Println(lines[1])
	fmt.Println(len(lines), "lines shown;", len(strings.Split(res.FullText(), "\n")), "kept;", res.Cuts[0].Kind, "of", res.Cuts[0].Of)
	// Output:
	// [collapsed: lines 1-10 of this output (10 lines, 400 chars) are lines 21-30 of the output of call call_1 shown earlier; recall call call_2 for this output in full]
	//   31  total += price[31] * quantity[31]
	// 11 lines shown; 20 kept; deduped of call_1
}

// Two reads in one round run side by side; the second, by call order,
// reaches the model as a pointer to the first whichever finishes first.
func ExampleCollapse_sameRound() {
	var file []string
	for i := 1; i <= 40; i++ {
		file = append(file, fmt.Sprintf("%4d  total += price[%d] * quantity[%d]", i, i, i))
	}
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(strings.Join(file, "\n")), nil
		},
	}
	eng, err := harness.NewEngine(&harness.Options{Tools: []harness.Tool{read}, Guards: []harness.Guard{(&guard.Collapse{}).Guard()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1}
	conv.Turns = append(conv.Turns, turn)
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{
		{ID: "call_1", Name: "read"}, {ID: "call_2", Name: "read"}}}}
	for _, res := range eng.RunCalls(context.Background(), conv, turn, round, nil) {
		first, _, _ := strings.Cut(res.ModelText(), "\n")
		fmt.Printf("%s, %d of %d bytes shown: %s\n", res.CallID, len(res.ModelText()), len(res.FullText()), first)
	}
	// Output:
	// call_1, 1581 of 1581 bytes shown:    1  total += price[1] * quantity[1]
	// call_2, 163 of 1581 bytes shown: [collapsed: lines 1-40 of this output (40 lines, 1582 chars) are lines 1-40 of the output of call call_1 shown earlier; recall call call_2 for this output in full]
}

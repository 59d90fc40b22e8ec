package guard_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// seq is a tool that prints the numbers 1..n, one a line.
func seq(n int) harness.ToolFunc {
	return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return harness.TextResult(b.String()), nil
	}
}

// marker returns the guard's marker from a model copy.
func marker(text string) string {
	i := strings.Index(text, "[harness:")
	return text[i : i+strings.Index(text[i:], "]")+1]
}

// A result over the ceiling is spilled to the workspace; the model sees a
// head and a tail around a marker that says where the rest is.
func ExampleResultPolicy() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)

	policy := &guard.ResultPolicy{MaxBytes: 4096}
	fn := harness.Chain(seq(5000), policy.Guard())
	// The agent puts this in the context of every call.
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{
		Conversation: "c_demo", Turn: 1, Round: 1, Workspace: ws,
		Spec: harness.ToolSpec{Name: "seq", Risk: harness.ReadOnly},
	})
	res, _ := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "seq", Args: []byte(`{}`)})

	cut := res.Cuts[0]
	fmt.Println(cut.Kind, cut.Locator)
	fmt.Println("payload", res.Bytes, "bytes; model copy", cut.BytesOut, "bytes")
	fmt.Println(marker(res.ModelText()))
	saved, _ := os.ReadFile(ws + "/" + cut.Locator)
	fmt.Println("spill file holds the full payload:", string(saved) == res.FullText())
	// Output:
	// spilled .harness/spill/c_demo/call_1-seq.txt
	// payload 23893 bytes; model copy 4087 bytes
	// [harness: seq returned 23893 bytes, more than the 4096-byte limit for one result, so the whole result was saved to .harness/spill/c_demo/call_1-seq.txt (5000 lines). Shown here: the start up to line 711 (2736 bytes) and the end from line 4819 (910 bytes); the 20247 bytes in between are omitted. The omitted part starts at line 712. Read it with read_file on that path (offset and limit count lines) or search it with grep on that path.]
	// spill file holds the full payload: true
}

// With Dedupe, a read-only call that repeats an earlier one with the same
// result gets a pointer instead of the same bytes again. The guard decides
// from the transcript (and, for a repeat within one round, from the
// round's earlier results): an engine runs the rounds here, as the agent
// does.
func ExampleResultPolicy_dedupe() {
	policy := &guard.ResultPolicy{Dedupe: guard.Dedupe{From: 2}}
	eng, _ := harness.NewEngine(&harness.Options{
		Tools:  []harness.Tool{{Spec: harness.ToolSpec{Name: "seq", Risk: harness.ReadOnly}, Func: seq(3)}},
		Guards: []harness.Guard{policy.Guard()},
	})
	conv := harness.NewConversation("c_demo")
	turn := &harness.Turn{Index: 1}
	conv.Turns = append(conv.Turns, turn)
	for r := 1; r <= 2; r++ {
		id := fmt.Sprintf("call_%d", r)
		round := &harness.Round{Index: r, Assistant: harness.Message{Role: harness.RoleAssistant,
			ToolCalls: []harness.ToolCall{{ID: id, Name: "seq", Args: []byte(`{"n": 3}`)}}}}
		round.Results = eng.RunCalls(context.Background(), conv, turn, round, nil)
		_ = eng.AppendRound(context.Background(), conv, turn, round)
		fmt.Printf("%s: %q\n", id, round.Results[0].ModelText())
	}
	// Output:
	// call_1: "1\n2\n3\n"
	// call_2: "[harness: this seq call repeats call call_1 (turn 1, round 1) with the same arguments and returned the same 6 bytes; nothing has been modified since, so the result is not shown again: use the result of call call_1.]"
}

// HeadTail is the default preview; other strategies are measured by
// setting Preview. Here: the end only, for logs whose verdict is last.
func ExampleHeadTail() {
	policy := &guard.ResultPolicy{MaxBytes: 300, NoSpill: true, Preview: guard.HeadTail{Tail: 1}}
	fn := harness.Chain(seq(1000), policy.Guard())
	res, _ := fn(context.Background(), &harness.ToolCall{ID: "call_1", Name: "seq", Args: []byte(`{}`)})
	fmt.Println(strings.HasSuffix(res.ModelText(), "999\n1000\n"), len(res.ModelText()) <= 300)
	// Output: true true
}

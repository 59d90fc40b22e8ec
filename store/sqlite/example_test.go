package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// Record a run in the store, then resume the conversation from it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-store")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "harness.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == harness.RoleUser {
				n++
			}
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart(fmt.Sprintf("I have seen %d user messages.", n))}}}, nil
	})
	agent, _ := harness.New(model, &harness.Options{Recorder: st, Observer: st.Observe})
	conv := harness.NewConversation("demo")
	if _, err := agent.Run(ctx, conv, "hello"); err != nil {
		fmt.Println(err)
		return
	}

	// Later, maybe in another process: load and continue.
	resumed, err := st.Load(ctx, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := agent.Run(ctx, resumed, "and again")
	fmt.Println(res.Answer)
	list, _ := st.List(ctx)
	fmt.Println(list[0].ID, list[0].Turns, "turns")
	// Output:
	// I have seen 2 user messages.
	// demo 2 turns
}

// The store keeps what every request offered beside the transcript: the
// system prompt and the tool schemas it sent, each distinct one once.
func ExampleStore_Requests() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-store")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "harness.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	lookup := harness.Tool{
		Spec: harness.ToolSpec{Name: "lookup", Description: "Look a word up.", Risk: harness.ReadOnly,
			InputSchema: []byte(`{"type":"object","properties":{"word":{"type":"string"}}}`)},
		Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("a small bird"), nil
		},
	}
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{Name: "lookup", Args: []byte(`{"word":"wren"}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("A wren is a small bird.")}}}, nil
	})
	agent, _ := harness.New(model, &harness.Options{System: "Answer in one sentence.", Tools: []harness.Tool{lookup}, Recorder: st})
	if _, err := agent.Run(ctx, harness.NewConversation("words"), "What is a wren?"); err != nil {
		fmt.Println(err)
		return
	}

	reqs, err := st.Requests(ctx, "words", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range reqs {
		fmt.Printf("turn %d round %d: system prompt %d bytes, tools %v (%d bytes), same list as round 1: %v\n",
			q.Turn, q.Round, q.SystemBytes, q.ToolNames(), q.ToolBytes, q.ToolSet == reqs[0].ToolSet)
	}
	// Output:
	// turn 1 round 1: system prompt 23 bytes, tools [lookup] (122 bytes), same list as round 1: true
	// turn 1 round 2: system prompt 23 bytes, tools [lookup] (122 bytes), same list as round 1: true
}

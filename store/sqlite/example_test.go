package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
func ExampleOpen_requests() {
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

// A second writer continues a turn whose first writer went away (here its
// lease expires at once): ResumeTurn takes the conversation over and the
// turn ends as the new writer says, with the rounds of both.
func ExampleOpen_resumeTurn() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "harness-store")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "harness.db")
	first, err := sqlite.Open(ctx, path, &sqlite.Options{LeaseTTL: time.Nanosecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer first.Close()
	conv := harness.NewConversation("durable")
	turn := &harness.Turn{Index: 1, Input: "a long task"}
	say := func(i int, text string) *harness.Round {
		return &harness.Round{Index: i, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}}
	}
	_ = first.BeginTurn(ctx, conv, turn)
	_ = first.AddRound(ctx, conv, turn, say(1, "step one"))

	second, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Close()
	loaded, _ := second.Load(ctx, "durable")
	resumed := loaded.Turns[0]
	if err := second.ResumeTurn(ctx, loaded, resumed); err != nil {
		fmt.Println(err)
		return
	}
	_ = second.AddRound(ctx, loaded, resumed, say(2, "step two"))
	resumed.Outcome = harness.Answered
	_ = second.EndTurn(ctx, loaded, resumed)

	got, _ := second.Load(ctx, "durable")
	fmt.Println(got.Turns[0].Outcome, len(got.Turns[0].Rounds), "rounds")
	// Output: answered 2 rounds
}

package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

// A model that calls a tool once, then answers with what it read.
func ExampleAgent_Run() {
	clock := harness.Tool{
		Spec: harness.ToolSpec{Name: "clock", Description: "Returns the time in UTC.", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("12:00 UTC"), nil
		},
	}
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == harness.RoleTool {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("It is " + last.Text() + ".")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "c1", Name: "clock", Args: json.RawMessage(`{}`)}}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{clock}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := agent.Run(context.Background(), harness.NewConversation("example"), "What time is it?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Answer)
	fmt.Println(res.Outcome, res.Requests, "requests,", res.ToolRounds, "tool round")
	// Output:
	// It is 12:00 UTC.
	// answered 2 requests, 1 tool round
}

// Guards are middleware around a tool function; the first is outermost.
func ExampleChain() {
	upper := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil {
				return nil, err
			}
			res.Model = []harness.Part{harness.TextPart(strings.ToUpper(res.FullText()))}
			return res, nil
		}
	}
	tool := func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult("full payload"), nil
	}
	res, _ := harness.Chain(tool, upper)(context.Background(), &harness.ToolCall{Name: "t"})
	fmt.Println("stored:", res.FullText())
	fmt.Println("model sees:", res.ModelText())
	// Output:
	// stored: full payload
	// model sees: FULL PAYLOAD
}

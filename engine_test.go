package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestEngineStepsFromOutside drives the engine the way a proxy does: it
// never calls a model or a tool itself. The client's tool result is
// admitted once through the guards (Returning), the stored copy is what
// every later request shows, and the per-turn policies shape each request.
func TestEngineStepsFromOutside(t *testing.T) {
	admitted := 0
	shorten := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			admitted++
			res, err := next(ctx, call)
			if err == nil {
				res.Model = []harness.Part{harness.TextPart("[short] " + res.FullText()[:5])}
				res.Cuts = append(res.Cuts, harness.Cut{Kind: harness.CutTruncated, By: "test"})
			}
			return res, err
		}
	}
	views := 0
	count := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		views++
		v.Spent = v.Spent.Add(harness.Usage{Input: 1})
		return nil
	})
	eng, err := harness.NewEngine(&harness.Options{System: "be brief", Guards: []harness.Guard{shorten}, Policies: []harness.ViewPolicy{count}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conv := harness.NewConversation("c")
	tools := []harness.ToolSpec{{Name: "read", Risk: harness.ReadOnly}}
	turn, err := eng.BeginTurn(ctx, conv, "what is in a.txt?")
	if err != nil {
		t.Fatal(err)
	}
	offered := eng.SelectTools(ctx, conv, turn, tools)
	view, req, err := eng.Request(ctx, conv, turn, offered, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if req.System != "be brief" || req.Messages[0].Role != harness.RoleSystem || len(req.Tools) != 1 || view.Spent.Input != 1 {
		t.Fatalf("first request: system %q, %d tools, spent %+v", req.System, len(req.Tools), view.Spent)
	}
	// The upstream model asked for a call; the client ran it.
	reply := &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "call_1", Name: "read", Args: json.RawMessage(`{}`)}}}}
	round := eng.Round(ctx, conv, turn, view, reply)
	info := eng.CallInfo(conv, turn, round, view)
	info.Spec = tools[0]
	clientResult := harness.TextResult("hello world, a long file")
	res := eng.Admit(ctx, info, round.Assistant.ToolCalls[0], harness.Returning(clientResult))
	round.Results = append(round.Results, res)
	if err := eng.AppendRound(ctx, conv, turn, round); err != nil {
		t.Fatal(err)
	}
	if res.CallID != "call_1" || res.ModelText() != "[short] hello" || res.FullText() != clientResult.FullText() || len(clientResult.Cuts) > 0 {
		t.Fatalf("admitted %+v (the client's result must stay as sent: %+v)", res, clientResult)
	}
	// The client sends the whole history again: the engine builds the
	// next request from the stored copy, without admitting it again.
	for range 2 {
		_, req, err = eng.Request(ctx, conv, turn, offered, false, false)
		if err != nil {
			t.Fatal(err)
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if admitted != 1 || last.Role != harness.RoleTool || last.Text() != "[short] hello" || views != 3 {
		t.Fatalf("admitted %d times, %d views, last message %s %q", admitted, views, last.Role, last.Text())
	}
	if _, err := eng.EndTurn(ctx, conv, turn, harness.Answered, harness.Usage{}, ""); err != nil || turn.Outcome != harness.Answered {
		t.Fatalf("end: %v %s", err, turn.Outcome)
	}
}

// TestEngineRequestStopsToFinal: a policy's stop verdict on a non-final
// view gives a final request (tools withheld) that keeps the verdict.
func TestEngineRequestStopsToFinal(t *testing.T) {
	stop := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		if !v.Final {
			v.Stop, v.StopReason = harness.Stuck, "same round 6 times"
		}
		return nil
	})
	eng, err := harness.NewEngine(&harness.Options{Policies: []harness.ViewPolicy{stop}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	turn, _ := eng.BeginTurn(context.Background(), conv, "go")
	view, req, err := eng.Request(context.Background(), conv, turn, []harness.ToolSpec{{Name: "x"}}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if !view.Final || !req.Final || len(req.Tools) != 0 || view.Stop != harness.Stuck || !strings.Contains(view.StopReason, "6 times") {
		t.Fatalf("view final %v stop %q, request final %v with %d tools", view.Final, view.Stop, req.Final, len(req.Tools))
	}
	round := eng.Round(context.Background(), conv, turn, view, &harness.Response{Message: harness.Message{
		ToolCalls: []harness.ToolCall{{Name: "x"}}}})
	if len(round.Dropped) != 1 || len(round.Assistant.ToolCalls) != 0 || !round.Final {
		t.Fatalf("round %+v", round)
	}
}

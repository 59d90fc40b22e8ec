package guard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/policy"
)

// A result the turn budget trimmed in the request the model just answered
// is not visible whole, so a repeat of its call must be shown in full:
// the trim lives in the view, not in the transcript.
func TestRepeatOfAResultTrimmedInTheViewIsShownWhole(t *testing.T) {
	body := map[string]string{
		"a": strings.Repeat("alpha line\n", 450) + "END-OF-A",
		"b": strings.Repeat("bravo line\n", 450) + "END-OF-B",
	}
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ Name string }
			_ = json.Unmarshal(c.Args, &a)
			return harness.TextResult(body[a.Name]), nil
		},
	}
	step := 0
	var last *harness.Request
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		last = req
		step++
		names := map[int]string{1: "a", 2: "b", 3: "a"}
		if n, ok := names[step]; ok {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{Name: "read", Args: json.RawMessage(`{"name":"` + n + `"}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	for _, c := range []struct {
		name    string
		budget  *policy.TurnBudget
		deduped bool
	}{
		{"every-round budget trims the first read", &policy.TurnBudget{Chars: 6000, When: policy.EveryRound}, false},
		{"nothing trims it", &policy.TurnBudget{Chars: 100_000, When: policy.EveryRound}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			step = 0
			a, err := harness.New(model, &harness.Options{
				Tools:    []harness.Tool{read},
				Guards:   []harness.Guard{(&guard.ResultPolicy{Dedupe: guard.Dedupe{From: 2}}).Guard()},
				Policies: []harness.ViewPolicy{c.budget},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), harness.NewConversation(""), "read a, b, a")
			if err != nil {
				t.Fatal(err)
			}
			repeat := res.Turn.Rounds[2].Results[0]
			deduped := false
			for _, cut := range repeat.Cuts {
				deduped = deduped || cut.Kind == harness.CutDeduped
			}
			if deduped != c.deduped {
				t.Fatalf("repeat deduped = %v, want %v (model copy %q)", deduped, c.deduped, repeat.ModelText())
			}
			var all strings.Builder
			for _, m := range last.Messages {
				all.WriteString(m.Text())
			}
			if !strings.Contains(all.String(), "END-OF-A") {
				t.Fatal("the end of a is nowhere in the final request")
			}
		})
	}
}

// However small the budget and floor, every trimmed result ends with a
// visible marker.
func TestTinyTurnBudgetStillMarksEveryTrim(t *testing.T) {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "go"}
	round := &harness.Round{Index: 1}
	for i := range 20 {
		id := "call_" + strings.Repeat("x", i+1)
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "t"})
		round.Results = append(round.Results, &harness.ToolResult{CallID: id, Tool: "t", Parts: []harness.Part{harness.TextPart(strings.Repeat("evidence ", 20))}})
	}
	turn.Rounds = []*harness.Round{round}
	conv.Turns = []*harness.Turn{turn}
	v := harness.BuildView(conv, turn, "", nil, true)
	if err := (&policy.TurnBudget{Chars: 10, MinKeep: 1}).ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	trimmed := 0
	for i, m := range v.Messages {
		if m.Role != harness.RoleTool || len(v.Origins[i].Cuts) == 0 {
			continue
		}
		trimmed++
		if !strings.Contains(m.Text(), "(trimmed") {
			t.Fatalf("trimmed result %d has no visible marker: %q", i, m.Text())
		}
	}
	if trimmed != 20 {
		t.Fatalf("%d results trimmed, want all 20", trimmed)
	}
}

// At small ceilings the marker still names the tool, the sizes and how to
// read the rest.
func TestSmallCeilingMarkerSaysHowToReadTheRest(t *testing.T) {
	for _, limit := range []int{384, 512, 700} {
		ws := t.TempDir()
		g := (&guard.ResultPolicy{MaxBytes: limit}).Guard()
		tool := func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(strings.Repeat("0123456789 abcdefghij\n", 400)), nil
		}
		ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c_small", Workspace: ws, Spec: harness.ToolSpec{Name: "dump", Risk: harness.ReadOnly}})
		res, err := g(tool)(ctx, &harness.ToolCall{ID: "call_1", Name: "dump"})
		if err != nil {
			t.Fatal(err)
		}
		text := res.ModelText()
		if len(text) > limit {
			t.Fatalf("limit %d: model copy is %d bytes", limit, len(text))
		}
		for _, want := range []string{"dump", "8800 B", "read_file", ".harness/spill/c_small/"} {
			if !strings.Contains(text, want) {
				t.Errorf("limit %d: marker does not say %q:\n%s", limit, want, text)
			}
		}
	}
}

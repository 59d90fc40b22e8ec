package recall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/tools/recall"
)

func conversation() *harness.Conversation {
	conv := harness.NewConversation("c1")
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{{Index: 1, Results: []*harness.ToolResult{
		{CallID: "call_big", Tool: "read", Parts: []harness.Part{harness.TextPart(strings.Repeat("0123456789", 100))},
			Model: []harness.Part{harness.TextPart("(cut)")}},
		{CallID: "call_err", Tool: "read", Parts: []harness.Part{harness.TextPart("no such file")}, IsError: true},
		{CallID: "call_json", Tool: "api", Parts: []harness.Part{harness.TextPart("summary")}, Structured: json.RawMessage(`{"rows":[1,2]}`)},
	}}}}}
	return conv
}

func run(t *testing.T, tool harness.Tool, conv *harness.Conversation, args string) *harness.ToolResult {
	t.Helper()
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: conv.ID, Transcript: conv})
	res, err := tool.Func(ctx, &harness.ToolCall{ID: "r", Name: recall.Name, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRecallFromTranscript(t *testing.T) {
	tool := recall.New(nil)
	if !tool.Spec.Risk.IsReadOnly() || tool.Spec.Name != "recall" {
		t.Fatalf("spec %+v", tool.Spec)
	}
	conv := conversation()
	for _, tc := range []struct {
		args, want string
		isErr      bool
	}{
		{`{"call_id":"call_big"}`, strings.Repeat("0123456789", 100), false}, // the full payload, not the model's copy
		{`{"call_id":"call_json"}`, "summary\n{\"rows\":[1,2]}", false},
		{`{"call_id":"call_err"}`, "(the recalled call had failed; its error result follows)\nno such file", false},
		{`{"call_id":"call_big","offset":995}`, "56789\n… (characters 995–1000 of 1000: the end of the result)", false},
		{`{"call_id":"call_big","offset":10,"limit":5}`, "01234\n… (characters 10–15 of 1000; call recall with offset=15 for more)", false},
		{`{"call_id":"nope"}`, `recall: no stored result has call id "nope"`, true},
		{`{"call_id":""}`, "call_id is required", true},
		{`{"call_id":"call_big","offset":-1}`, "must not be negative", true},
		{`[1]`, "not a JSON object", true},
	} {
		res := run(t, tool, conv, tc.args)
		got := res.FullText()
		if res.IsError != tc.isErr || (!tc.isErr && got != tc.want) || (tc.isErr && !strings.Contains(got, tc.want)) {
			t.Errorf("%s: error=%v %q; want error=%v %q", tc.args, res.IsError, got, tc.isErr, tc.want)
		}
	}
}

func TestRecallFallsBackToLookup(t *testing.T) {
	var asked string
	tool := recall.New(&recall.Options{Lookup: func(ctx context.Context, convID, callID string) (*harness.ToolResult, error) {
		asked = convID + "/" + callID
		switch callID {
		case "stored":
			return harness.TextResult("from the store"), nil
		case "broken":
			return nil, errors.New("disk on fire")
		case "call_partial":
			return harness.TextResult("the full payload"), nil
		}
		if callID == "gone" {
			return nil, fmt.Errorf("sqlite: %w", store.ErrNotFound)
		}
		return nil, nil
	}})
	conv := conversation()
	if got := run(t, tool, conv, `{"call_id":"stored"}`).FullText(); got != "from the store" || asked != "c1/stored" {
		t.Fatalf("got %q asked %q", got, asked)
	}
	if res := run(t, tool, conv, `{"call_id":"broken"}`); !res.IsError || !strings.Contains(res.FullText(), "disk on fire") {
		t.Fatalf("store failure: %q", res.FullText())
	}
	if res := run(t, tool, conv, `{"call_id":"gone"}`); !res.IsError || !strings.Contains(res.FullText(), "no stored result") {
		t.Fatalf("not found: %q", res.FullText())
	}
	asked = ""
	if got := run(t, tool, conv, `{"call_id":"call_big"}`).FullText(); len(got) != 1000 || asked != "" {
		t.Fatal("transcript not searched first")
	}
	// A result loaded without its payload is fetched from the store; with
	// no store lookup, recall says so instead of returning the cut copy.
	partial := &harness.ToolResult{CallID: "call_partial", Tool: "read", Model: []harness.Part{harness.TextPart("(cut)")}, Partial: true}
	conv.Turns[0].Rounds[0].Results = append(conv.Turns[0].Rounds[0].Results, partial)
	if got := run(t, tool, conv, `{"call_id":"call_partial"}`).FullText(); got != "the full payload" {
		t.Fatalf("partial result: %q", got)
	}
	if res := run(t, recall.New(nil), conv, `{"call_id":"call_partial"}`); !res.IsError || !strings.Contains(res.FullText(), "not loaded") {
		t.Fatalf("partial without lookup: %q", res.FullText())
	}
}

// Through the agent: a result from turn 1 is recalled in turn 2 and comes
// back in full, while the agent's guards (a stand-in ceiling here) still
// bound what the model is shown of it.
func TestRecallThroughAgent(t *testing.T) {
	big := strings.Repeat("line of a big file\n", 500)
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(big), nil
		},
	}
	ceiling := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, c)
			if err == nil && len(res.FullText()) > 1000 {
				res.Model = []harness.Part{harness.TextPart(res.FullText()[:1000] + "…[cut]")}
				res.Cuts = append(res.Cuts, harness.Cut{Kind: harness.CutTruncated, By: "test-ceiling"})
			}
			return res, err
		}
	}
	s := &scripted.Script{Steps: []scripted.Step{
		{ToolCalls: []scripted.Call{{ID: "call_read", Name: "read", Args: json.RawMessage(`{}`)}}},
		{Text: "read it"},
		{ToolCalls: []scripted.Call{{Name: "recall", Args: json.RawMessage(`{"call_id":"call_read"}`)}}},
		{Expect: &scripted.Expect{LastToolContains: []string{"…[cut]"}}, Text: "done"},
	}}
	agent, err := harness.New(scripted.New(s, nil), &harness.Options{
		Tools: []harness.Tool{read, recall.New(nil)}, Guards: []harness.Guard{ceiling}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	for _, in := range []string{"read", "again"} {
		if _, err := agent.Run(context.Background(), conv, in); err != nil {
			t.Fatal(err)
		}
	}
	got := conv.Turns[1].Rounds[0].Results[0]
	if got.FullText() != big || got.Tool != "recall" || len(got.Cuts) != 1 {
		t.Fatalf("recall stored %d bytes, cuts %v", len(got.FullText()), got.Cuts)
	}
}

func Example() {
	conv := harness.NewConversation("c1")
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{{Index: 1, Results: []*harness.ToolResult{
		{CallID: "call_7", Tool: "grep", Parts: []harness.Part{harness.TextPart("main.go:12: func main()")}},
	}}}}}
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: conv.ID, Transcript: conv})
	res, _ := recall.New(nil).Func(ctx, &harness.ToolCall{Name: recall.Name, Args: json.RawMessage(`{"call_id":"call_7"}`)})
	fmt.Println(res.FullText())
	// Output: main.go:12: func main()
}

package recall_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/tools/recall"
)

// A conversation resumed from the SQLite store holds only the model's copy
// of a cut result; recall serves the full payload through FullResult.
func TestRecallFromSQLiteStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	big := strings.Repeat("row of a large query result\n", 400)
	query := harness.Tool{
		Spec: harness.ToolSpec{Name: "query", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(big), nil
		},
	}
	ceiling := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, c)
			if err == nil && len(res.FullText()) > 500 {
				res.Model = []harness.Part{harness.TextPart(res.FullText()[:500] + "…[cut]")}
				res.Cuts = append(res.Cuts, harness.Cut{Kind: harness.CutTruncated, By: "test-ceiling", BytesIn: len(big), BytesOut: 506})
			}
			return res, err
		}
	}
	tools := []harness.Tool{query, recall.New(&recall.Options{Lookup: st.FullResult})}
	first := scripted.New(&scripted.Script{Steps: []scripted.Step{
		{ToolCalls: []scripted.Call{{ID: "call_q", Name: "query", Args: json.RawMessage(`{}`)}}},
		{Text: "queried"},
	}}, nil)
	a1, err := harness.New(first, &harness.Options{Tools: tools, Guards: []harness.Guard{ceiling}, Recorder: st})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	if _, err := a1.Run(ctx, conv, "run the query"); err != nil {
		t.Fatal(err)
	}

	resumed, err := st.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := resumed.FindResult("call_q"); !store.Partial(r) {
		t.Fatalf("expected a partial result after Load, got %+v", r)
	}
	second := scripted.New(&scripted.Script{Steps: []scripted.Step{
		{ToolCalls: []scripted.Call{{Name: "recall", Args: json.RawMessage(`{"call_id":"call_q"}`)}}},
		{Text: "recalled"},
	}}, nil)
	a2, err := harness.New(second, &harness.Options{Tools: tools, Recorder: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Run(ctx, resumed, "show me everything"); err != nil {
		t.Fatal(err)
	}
	got := resumed.LastTurn().Rounds[0].Results[0]
	if got.IsError || got.FullText() != big {
		t.Fatalf("recall returned %d bytes (error %v), want the full %d", len(got.FullText()), got.IsError, len(big))
	}
}

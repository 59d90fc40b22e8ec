package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

func TestCollapseGuard(t *testing.T) {
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("%6d\tline number %d of the file", i, i))
	}
	conv := harness.NewConversation("c")
	first := &harness.ToolResult{CallID: "a", Tool: "read_file", Parts: []harness.Part{harness.TextPart(strings.Join(lines[:30], "\n"))}}
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{{Index: 1, Results: []*harness.ToolResult{first}}}}}
	second := strings.Join(lines[10:40], "\n") // lines 11-40: 20 already shown
	fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(second), nil
	}, collapseGuard(8))
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Transcript: conv})
	res, err := fn(ctx, &harness.ToolCall{ID: "b", Name: "read_file"})
	if err != nil {
		t.Fatal(err)
	}
	got := res.ModelText()
	if !strings.Contains(got, "[20 lines identical to lines shown in the result of call a — omitted]") ||
		!strings.Contains(got, "line number 31 ") || strings.Contains(got, "line number 11 ") || res.FullText() != second {
		t.Errorf("model copy:\n%s", got)
	}
	if len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutDeduped || res.Cuts[0].Locator != "call:b" {
		t.Errorf("cuts %+v", res.Cuts)
	}
	// Fewer than 8 repeated lines stay.
	res, _ = harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(strings.Join(lines[25:35], "\n")), nil
	}, collapseGuard(8))(ctx, &harness.ToolCall{ID: "c"})
	if res.Cut() {
		t.Errorf("a run of 5 repeated lines was collapsed: %s", res.ModelText())
	}
}

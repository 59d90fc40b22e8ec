package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// turnResult runs one agent turn in which a scripted model calls tool once
// with args and then answers. It returns the stored result and the tool
// message the model was shown in its second request.
func turnResult(t *testing.T, tools map[string]harness.Tool, name, args string, guards []harness.Guard, workspace string) (*harness.ToolResult, harness.Message) {
	t.Helper()
	var shown harness.Message
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant,
				ToolCalls: []harness.ToolCall{{ID: "call_1", Name: name, Args: json.RawMessage(args)}}}}, nil
		}
		for _, m := range req.Messages {
			if m.Role == harness.RoleTool {
				shown = m
			}
		}
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	var list []harness.Tool
	for _, tl := range tools {
		list = append(list, tl)
	}
	// Only a hang may time the call out: 20 MB of JSON under -race on a
	// loaded machine takes what it takes.
	agent, err := harness.New(model, &harness.Options{Tools: list, Guards: guards, Workspace: workspace, ToolTimeout: hangBound})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_mcp")
	if _, err := agent.Run(context.Background(), conv, "go"); err != nil {
		t.Fatal(err)
	}
	return conv.Turns[0].Rounds[0].Results[0], shown
}

func messageBytes(m harness.Message) int {
	n := 0
	for _, p := range m.Parts {
		n += p.Size()
	}
	return n
}

// A server returning 50 MB in one text block, or 1,000 blocks, stays under
// the ceiling of guard.ResultPolicy: the model is shown at most the
// ceiling, the stored result keeps every byte, and the spill file holds
// the whole payload.
func TestServerFloodStaysUnderCeiling(t *testing.T) {
	const ceiling = 24 << 10
	_, tools := openTest(t, nil, stdioServer(t, "local"))
	policy := &guard.ResultPolicy{MaxBytes: ceiling}

	// 50 MB normally; under -race (ten times slower at JSON) 20 MB, still
	// above the go-sdk's default 16 MiB frame limit this package raises.
	flood := 50_000_000
	if raceEnabled {
		flood = 20_000_000
	}
	for _, tc := range []struct {
		name, tool, args string
		bytes            int
	}{
		{fmt.Sprintf("%d MB", flood/1_000_000), "big", fmt.Sprintf(`{"bytes":%d}`, flood), flood},
		{"1,000 blocks", "blocks", `{"count":1000,"size":200}`, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			res, shown := turnResult(t, tools, tc.tool, tc.args, []harness.Guard{policy.Guard()}, ws)
			if res.IsError {
				t.Fatalf("%.300s", res.FullText())
			}
			if tc.bytes > 0 && res.Bytes != tc.bytes {
				t.Errorf("stored payload %d bytes, want %d", res.Bytes, tc.bytes)
			}
			if tc.tool == "blocks" && len(res.Parts) != 1000 {
				t.Errorf("%d parts stored, want 1000", len(res.Parts))
			}
			if got := messageBytes(shown); got > ceiling || got == 0 {
				t.Errorf("model shown %d bytes, ceiling %d", got, ceiling)
			}
			if len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutSpilled {
				t.Fatalf("cuts %+v", res.Cuts)
			}
			text := shown.Parts[0].Text
			if !strings.Contains(text, res.Cuts[0].Locator) {
				t.Errorf("marker lacks the spill path %q", res.Cuts[0].Locator)
			}
			spilled, err := os.ReadFile(filepath.Join(ws, res.Cuts[0].Locator))
			if err != nil {
				t.Fatal(err)
			}
			if len(spilled) < res.Bytes {
				t.Errorf("spill holds %d bytes of %d", len(spilled), res.Bytes)
			}
		})
	}
}

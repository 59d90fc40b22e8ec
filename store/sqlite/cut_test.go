package sqlite

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
)

// TestRefsReadByJSONEach: a cut's Refs are plain JSON that SQLite itself
// reads (the conformance suite checks they load byte for byte).
func TestRefsReadByJSONEach(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, nil)
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant,
		ToolCalls: []harness.ToolCall{{ID: "c", Name: "read", Args: json.RawMessage(`{}`)}}},
		Results: []*harness.ToolResult{{CallID: "c", Tool: "read", Parts: []harness.Part{harness.TextPart("full c")},
			Model: []harness.Part{harness.TextPart("[collapsed]")}, Bytes: 6,
			Cuts: []harness.Cut{{Kind: harness.CutDeduped, By: "collapse", BytesIn: 6, BytesOut: 11, Locator: "call:c", Of: "call_a", Refs: []string{"call_a", "call_b"}}}}}}
	conv := &harness.Conversation{ID: "c_bytes", Turns: []*harness.Turn{{Index: 1, Input: "q", Rounds: []*harness.Round{round}}}}
	if err := s.Save(ctx, conv); err != nil {
		t.Fatal(err)
	}
	var ids string
	if err := s.r.QueryRowContext(ctx, `SELECT group_concat(j.value, ',') FROM cuts, json_each(cuts.refs) j WHERE conv_id = 'c_bytes'`).Scan(&ids); err != nil || ids != "call_a,call_b" {
		t.Errorf("json_each over refs: %q, %v", ids, err)
	}
}

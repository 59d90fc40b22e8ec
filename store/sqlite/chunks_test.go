package sqlite

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestLargePayloadsAreChunked: a payload above ChunkBytes (here 1,000
// bytes, standing for SQLite's 1 GB value limit) is stored in chunks and
// comes back byte for byte from LoadFull, FullResult and, when it is what
// the model saw, Load; the round is never dropped.
func TestLargePayloadsAreChunked(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, &Options{ChunkBytes: 1000})
	// Multi-byte characters straddle the chunk edges.
	text := strings.Repeat("line é 漢字 🙂 of a very long dump\n", 400)
	cutText := strings.Repeat("spilled ✓ ", 500)
	for _, tc := range []struct {
		name string
		res  *harness.ToolResult
	}{
		{"plain text shown whole", &harness.ToolResult{CallID: "c_text", Tool: "dump", Parts: []harness.Part{harness.TextPart(text)}}},
		{"parts JSON", &harness.ToolResult{CallID: "c_parts", Tool: "mcp", Parts: []harness.Part{
			harness.TextPart(text), harness.ImagePart("image/png", []byte(strings.Repeat("\x89PNG", 600))),
			harness.JSONPart(json.RawMessage(`{"rows": [1, 2, 3]}`)), harness.TextPart("bad \xff UTF-8")}}},
		{"cut, full only in the store", &harness.ToolResult{CallID: "c_cut", Tool: "shell", Parts: []harness.Part{harness.TextPart(cutText)},
			Model: []harness.Part{harness.TextPart("preview")}, Cuts: []harness.Cut{{Kind: harness.CutTruncated, By: "ceiling", BytesIn: len(cutText), BytesOut: 7}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := harness.NewConversation("conv_" + tc.res.CallID)
			turn := &harness.Turn{Index: 1, Input: "go"}
			tc.res.Bytes = tc.res.PayloadSize()
			round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant,
				ToolCalls: []harness.ToolCall{{ID: tc.res.CallID, Name: tc.res.Tool, Args: json.RawMessage(`{}`)}}},
				Results: []*harness.ToolResult{tc.res}}
			if err := s.BeginTurn(ctx, conv, turn); err != nil {
				t.Fatal(err)
			}
			if err := s.AddRound(ctx, conv, turn, round); err != nil {
				t.Fatalf("the round was not stored: %v", err)
			}
			var chunks int
			if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM result_chunks WHERE conv_id = ?`, conv.ID).Scan(&chunks); err != nil || chunks < 2 {
				t.Fatalf("%d chunks (%v): the chunked path was not taken", chunks, err)
			}
			full, err := s.LoadFull(ctx, conv.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := full.Turns[0].Rounds[0].Results[0]; !reflect.DeepEqual(got.Parts, tc.res.Parts) || got.Partial {
				t.Fatalf("LoadFull: payload differs (%d parts)", len(got.Parts))
			}
			fr, err := s.FullResult(ctx, conv.ID, tc.res.CallID)
			if err != nil || !reflect.DeepEqual(fr.Parts, tc.res.Parts) {
				t.Fatalf("FullResult: %v", err)
			}
			lazy, err := s.Load(ctx, conv.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := lazy.Turns[0].Rounds[0].Results[0]
			if tc.res.Model == nil && !reflect.DeepEqual(got.Parts, tc.res.Parts) {
				t.Fatal("Load: the payload the model saw differs")
			}
			if tc.res.Model != nil && (!got.Partial || got.ModelText() != "preview") {
				t.Fatalf("Load of a cut result: partial %v, model %q", got.Partial, got.ModelText())
			}
			if err := s.Delete(ctx, conv.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM result_chunks WHERE conv_id = ?`, conv.ID).Scan(&chunks); err != nil || chunks != 0 {
				t.Fatalf("%d chunks left after Delete (%v)", chunks, err)
			}
		})
	}
}

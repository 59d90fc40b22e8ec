package sqlite

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestGigabyteResultIsStored stores one result of 1,000,000,001 bytes with
// the default ChunkBytes: above SQLite's largest value. It needs several GB
// of memory and a minute, so it runs only with HARNESS_BIG_RESULT=1.
func TestGigabyteResultIsStored(t *testing.T) {
	if os.Getenv("HARNESS_BIG_RESULT") == "" {
		t.Skip("set HARNESS_BIG_RESULT=1 to store a 1 GB result")
	}
	ctx := context.Background()
	s := openTemp(t, nil)
	const size = 1_000_000_001
	res := &harness.ToolResult{CallID: "c_big", Tool: "dump", Parts: []harness.Part{harness.TextPart(strings.Repeat("x", size))},
		Model: []harness.Part{harness.TextPart("preview")}, Cuts: []harness.Cut{{Kind: harness.CutTruncated, BytesIn: size, BytesOut: 7}}}
	res.Bytes = size
	conv := harness.NewConversation("big")
	turn := &harness.Turn{Index: 1, Input: "dump"}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "c_big", Name: "dump"}}},
		Results: []*harness.ToolResult{res}}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRound(ctx, conv, turn, round); err != nil {
		t.Fatalf("the round was lost: %v", err)
	}
	full, err := s.FullResult(ctx, "big", "c_big")
	if err != nil || len(full.FullText()) != size {
		t.Fatalf("FullResult: %v", err)
	}
}

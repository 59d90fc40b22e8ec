package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/sqlite"
)

// TestSpillGCKeepsOnlyFullCopies: a streamed result that overflowed the
// ceiling is whole only in its spill file (the store keeps the preview);
// gc must not delete that file however old it is. A spill file the store
// also holds whole, or that no stored result points at, is collected.
func TestSpillGCKeepsOnlyFullCopies(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	streamed := spillFile(t, ws, "c1", "call_s", strings.Repeat("only copy\n", 5000), tenDays)
	whole := spillFile(t, ws, "c1", "call_w", "whole in the store too", tenDays)
	orphan := spillFile(t, ws, "c1", "call_o", "nobody points here", tenDays)

	st, err := sqlite.Open(ctx, filepath.Join(ws, defaultDBPath), nil)
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c1")
	turn := &harness.Turn{Index: 1, Input: "go"}
	preview := []harness.Part{harness.TextPart("only copy\n[… spilled …]")}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{
		{ID: "call_s", Name: "shell", Args: json.RawMessage(`{}`)}, {ID: "call_w", Name: "shell", Args: json.RawMessage(`{}`)}}},
		Results: []*harness.ToolResult{
			{CallID: "call_s", Tool: "shell", Parts: preview, Model: preview, Bytes: 50000,
				Cuts: []harness.Cut{{Kind: harness.CutSpilled, BytesIn: 50000, BytesOut: 24, Locator: streamed}}},
			{CallID: "call_w", Tool: "shell", Parts: []harness.Part{harness.TextPart("whole in the store too")}, Model: preview, Bytes: 22,
				Cuts: []harness.Cut{{Kind: harness.CutSpilled, BytesIn: 22, BytesOut: 24, Locator: whole}}},
		}}
	for _, err := range []error{st.BeginTurn(ctx, conv, turn), st.AddRound(ctx, conv, turn, round), st.EndTurn(ctx, conv, turn), st.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}

	rep := spillGC(t, ws)
	if _, err := os.Stat(filepath.Join(ws, streamed)); err != nil {
		t.Fatalf("gc deleted the only full copy of a stored result: %v (report %+v)", err, rep)
	}
	for _, p := range []string{whole, orphan} {
		if _, err := os.Stat(filepath.Join(ws, p)); !os.IsNotExist(err) {
			t.Errorf("%s kept: %v", p, err)
		}
	}
	if rep.Files != 2 || rep.Pinned != 1 {
		t.Errorf("report %+v", rep)
	}
}

package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// largeChunk is the chunk threshold testLargePayloads opens its store
// with: far below any real payload, so that a few kilobytes take the
// chunked path of a store that has one.
const largeChunk = 64

// largeResults are results well above largeChunk: plain text whose
// multi-byte characters straddle chunk edges, mixed parts (an image, a JSON
// part, invalid UTF-8) and a cut result whose full payload only the store
// keeps.
func largeResults() []*harness.ToolResult {
	text := strings.Repeat("line é 漢字 🙂 of a very long dump\n", 100)
	cut := strings.Repeat("spilled ✓ ", 300)
	rs := []*harness.ToolResult{
		{CallID: "big_text", Tool: "dump", Parts: []harness.Part{harness.TextPart(text)}},
		{CallID: "big_parts", Tool: "mcp", Parts: []harness.Part{harness.TextPart(text),
			harness.ImagePart("image/png", []byte(strings.Repeat("\x89PNG", 200))),
			harness.JSONPart(json.RawMessage(`{"rows": [1, 2, 3]}`)), harness.TextPart("bad \xff UTF-8")}},
		{CallID: "big_cut", Tool: "shell", Parts: []harness.Part{harness.TextPart(cut)}, Model: []harness.Part{harness.TextPart("preview")},
			Cuts: []harness.Cut{{Kind: harness.CutTruncated, By: "ceiling", BytesIn: len(cut), BytesOut: 7}}},
	}
	for _, r := range rs {
		r.Bytes = r.PayloadSize()
	}
	return rs
}

// testLargePayloads: with Options.ChunkBytes far below the payloads, a
// round of large results is stored and read back byte for byte by
// LoadFull, FullResult and (what the model saw) Load, and Delete leaves
// none of it behind. On a store with chunks (Backend.Chunks) the payloads
// were stored in several; a store without (PostgreSQL keeps each payload
// as one bytea of up to 1 GiB) ignores the threshold and must round-trip
// all the same.
func testLargePayloads(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, &Options{ChunkBytes: largeChunk})
	conv := harness.NewConversation("c_large")
	turn := &harness.Turn{Index: 1, Input: "dump it all"}
	want := largeResults()
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant}, Results: want}
	for _, r := range want {
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{ID: r.CallID, Name: r.Tool, Args: json.RawMessage(`{}`)})
	}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRound(ctx, conv, turn, round); err != nil {
		t.Fatalf("the round of large results was not stored: %v", err)
	}
	turn.Rounds, turn.Outcome = []*harness.Round{round}, harness.Answered
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	if be.Chunks {
		if n := be.Count(t, "result_chunks", conv.ID); n < 2*len(want) {
			t.Fatalf("%d chunks for %d large results: the chunked path was not taken", n, len(want))
		}
	}
	full, err := s.LoadFull(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got := full.Turns[0].Rounds[0].Results[i]; !reflect.DeepEqual(got.Parts, w.Parts) || got.Partial {
			t.Errorf("LoadFull of %s: payload differs (%d parts, partial %v)", w.CallID, len(got.Parts), got.Partial)
		}
		if got, err := s.FullResult(ctx, conv.ID, w.CallID); err != nil || !reflect.DeepEqual(got.Parts, w.Parts) {
			t.Errorf("FullResult of %s: payload differs (%v)", w.CallID, err)
		}
		got := lazy.Turns[0].Rounds[0].Results[i]
		switch {
		case w.Model == nil && !reflect.DeepEqual(got.Parts, w.Parts):
			t.Errorf("Load of %s: the payload the model saw differs", w.CallID)
		case w.Model != nil && (!store.Partial(got) || got.ModelText() != "preview"):
			t.Errorf("Load of the cut %s: partial %v, model %q", w.CallID, store.Partial(got), got.ModelText())
		}
	}
	if err := s.Delete(ctx, conv.ID); err != nil {
		t.Fatal(err)
	}
	if be.Chunks {
		if n := be.Count(t, "result_chunks", conv.ID); n != 0 {
			t.Errorf("%d chunks left after Delete", n)
		}
	}
}

package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/storefix"
)

// testLoadOutline checks LoadOutline: the conversation as Load gives it,
// except that no result carries its payload, cut or not; sizes, cuts and
// the model copy a guard wrote stay.
func testLoadOutline(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	if err := s.Save(ctx, storefix.CutConversation("c_outline", 1<<20)); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load(ctx, "c_outline")
	if err != nil {
		t.Fatal(err)
	}
	outline, err := s.LoadOutline(ctx, "c_outline")
	if err != nil {
		t.Fatal(err)
	}
	if len(outline.Turns) != 1 || len(outline.Turns[0].Rounds) != 2 {
		t.Fatalf("outline has %d turns, want 1 of 2 rounds", len(outline.Turns))
	}
	want := loaded.Turns[0].Rounds[0].Results
	for i, res := range outline.Turns[0].Rounds[0].Results {
		if res.Parts != nil || res.Structured != nil {
			t.Errorf("result %d of the outline carries its payload (%d bytes)", i, len(res.FullText()))
		}
		if res.Bytes != want[i].Bytes || !reflect.DeepEqual(res.Cuts, want[i].Cuts) || !reflect.DeepEqual(res.Model, want[i].Model) {
			t.Errorf("result %d: outline %d bytes, cuts %+v, model copy set %v; Load %d, %+v, %v",
				i, res.Bytes, res.Cuts, res.Model != nil, want[i].Bytes, want[i].Cuts, want[i].Model != nil)
		}
	}
	if got := outline.Turns[0].Rounds[1].Assistant; !reflect.DeepEqual(got, loaded.Turns[0].Rounds[1].Assistant) {
		t.Errorf("the outline's answer is %+v", got)
	}
	if _, err := s.LoadOutline(ctx, "c_none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LoadOutline of a missing conversation: %v, want store.ErrNotFound", err)
	}
}

// testSpillOnly checks SpillOnly: the locators of spilled results whose
// stored payload is short of the result (the spill file holds the only
// whole copy), and none of a spilled result stored whole or of a cut of
// another kind, in any conversation.
func testSpillOnly(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	result := func(id, text string, bytes int, cut harness.Cut) *harness.ToolResult {
		return &harness.ToolResult{CallID: id, Tool: "shell", Parts: []harness.Part{harness.TextPart(text)},
			Model: []harness.Part{harness.TextPart(text[:4] + " [cut]")}, Bytes: bytes, Cuts: []harness.Cut{cut}}
	}
	spilled := func(loc string) harness.Cut {
		return harness.Cut{Kind: harness.CutSpilled, By: "ceiling", BytesIn: 9000, BytesOut: 10, Locator: loc}
	}
	conv := func(id string, results ...*harness.ToolResult) *harness.Conversation {
		r := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant}, Results: results}
		for _, res := range results {
			r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, harness.ToolCall{ID: res.CallID, Name: "shell", Args: []byte(`{}`)})
		}
		return &harness.Conversation{ID: id, Turns: []*harness.Turn{{Index: 1, Input: "go", Outcome: harness.Answered, Rounds: []*harness.Round{r}}}}
	}
	whole := "the whole output"
	for _, c := range []*harness.Conversation{
		conv("c_a",
			result("call_1", "preview of a stream", 9000, spilled(".harness/spill/c_a/1.txt")),
			result("call_2", whole, len(whole), spilled(".harness/spill/c_a/2.txt")),
			result("call_3", "head of a file", 9000, harness.Cut{Kind: harness.CutTruncated, By: "cap", BytesIn: 9000, BytesOut: 10, Locator: "call:call_3"})),
		conv("c_b", result("call_1", "another preview", 9000, spilled(".harness/spill/c_b/1.txt"))),
	} {
		if err := s.Save(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SpillOnly(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{".harness/spill/c_a/1.txt": true, ".harness/spill/c_b/1.txt": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SpillOnly = %v, want %v", got, want)
	}
}

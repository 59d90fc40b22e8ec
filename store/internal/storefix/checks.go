package storefix

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// CheckAnswered loads conversation id from s and fails t unless every
// round of turn (counted from 1) has an answer time (Round.Answered) when
// timed is set, and none has one otherwise (rounds stored before the
// schema kept it).
func CheckAnswered(t testing.TB, s store.Store, id string, turn int, timed bool) {
	t.Helper()
	conv, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if turn < 1 || turn > len(conv.Turns) {
		t.Fatalf("conversation %s has %d turns, no turn %d", id, len(conv.Turns), turn)
	}
	for _, r := range conv.Turns[turn-1].Rounds {
		if r.Answered.IsZero() == timed {
			t.Errorf("turn %d round %d: Answered %v, want a time: %v", turn, r.Index, r.Answered, timed)
		}
	}
}

// ToolSpecRoundTrip records three rounds of a new conversation id whose
// requests send spec (with another schema, in two orders) and system, and
// fails t unless Requests gives both back byte for byte, with their sizes
// and one tool list for the rounds that sent the same one.
func ToolSpecRoundTrip(t testing.TB, s store.Store, id string, spec harness.ToolSpec, system string) {
	t.Helper()
	ctx := context.Background()
	other := harness.ToolSpec{Name: "other", Description: spec.Description}
	conv := harness.NewConversation(id)
	turn := &harness.Turn{Index: 1, Input: "q"}
	if err := s.BeginTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	for round, tools := range [][]harness.ToolSpec{{spec, other}, {spec, other}, {other, spec, spec}} {
		req := &harness.Request{System: system, Tools: tools, Turn: 1, Round: round + 1}
		if err := s.AddRequest(ctx, conv, turn, req); err != nil {
			t.Fatal(err)
		}
		if err := s.AddRound(ctx, conv, turn, &harness.Round{Index: round + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndTurn(ctx, conv, turn); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.Requests(ctx, conv.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := spec
	if len(want.InputSchema) == 0 {
		want.InputSchema = nil // none and empty send the same: nothing
	}
	for i, q := range reqs {
		if q.System != system || q.SystemBytes != len(system) || !q.Recorded {
			t.Fatalf("%s request %d: system %q (%d bytes), want %q", id, i, q.System, q.SystemBytes, system)
		}
		at := 0
		if i == 2 {
			at = 1
		}
		if !reflect.DeepEqual(q.Tools[at], want) {
			t.Fatalf("%s request %d: got %#v, want %#v", id, i, q.Tools[at], want)
		}
		bytes := 0
		for _, tool := range q.Tools {
			bytes += toolschema.Bytes(tool.Name, tool.Description, tool.InputSchema)
		}
		if q.ToolBytes != bytes {
			t.Fatalf("%s request %d: %d tool bytes, the schemas are %d", id, i, q.ToolBytes, bytes)
		}
	}
	if reqs[0].ToolSet != reqs[1].ToolSet || reqs[0].ToolSet == reqs[2].ToolSet {
		t.Fatalf("%s: tool lists %s %s %s", id, reqs[0].ToolSet, reqs[1].ToolSet, reqs[2].ToolSet)
	}
}

// BenchRound is a round of ten results as a coding agent makes them: nine
// reads of 880 bytes and one 20 KB output a guard cut to 2 KB, with their
// calls; ids are unique per conversation, turn and round.
func BenchRound(turn, round int) *harness.Round {
	small := strings.Repeat("a line of tool output\n", 40)
	big := strings.Repeat("a line of a large output\n", 800)
	r := &harness.Round{Index: round, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("looking")}},
		Usage: harness.Usage{Input: 1000, Output: 50}}
	for ci := 1; ci <= 10; ci++ {
		id := fmt.Sprintf("call_t%d_r%d_%d", turn, round, ci)
		r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "read", Args: []byte(`{"path":"x"}`)})
		res := &harness.ToolResult{CallID: id, Tool: "read", Parts: []harness.Part{harness.TextPart(small)}}
		if ci%5 == 0 {
			res.Parts = []harness.Part{harness.TextPart(big)}
			res.Model = []harness.Part{harness.TextPart(big[:2000] + "\n[cut]")}
			res.Cuts = []harness.Cut{{Kind: harness.CutSpilled, BytesIn: len(big), BytesOut: 2006, Locator: ".harness/spill/" + id}}
		}
		res.Bytes = res.PayloadSize()
		r.Results = append(r.Results, res)
	}
	return r
}

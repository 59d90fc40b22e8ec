package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/tokens"
)

// wordSelector offers the tools whose name shares a word with the input,
// and counts its calls.
type wordSelector struct{ calls []string }

func (s *wordSelector) Select(_ context.Context, conv *harness.Conversation, input string, tools []harness.ToolSpec) ([]harness.ToolSpec, error) {
	s.calls = append(s.calls, fmt.Sprintf("%d:%s", len(conv.Turns), input))
	var out []harness.ToolSpec
	for _, t := range tools {
		for _, w := range strings.Fields(input) {
			if strings.Contains(t.Name, w) {
				out = append(out, t)
				break
			}
		}
	}
	return out, nil
}

// selectionRecording offers 30 tools over two turns of three calls; the
// second turn calls a tool its input does not name.
func selectionRecording() *Recording {
	rec := &Recording{Source: "sel", ID: "sel", System: "sys"}
	for _, noun := range []string{"order", "customer", "product", "invoice", "refund", "coupon"} {
		for _, verb := range []string{"get", "list", "create", "update", "delete"} {
			rec.Tools = append(rec.Tools, harness.ToolSpec{Name: verb + "_" + noun, Description: verb + " a " + noun + " of the store",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)})
		}
	}
	n := 0
	call := func(tool, out string) *Call {
		n++
		id := fmt.Sprintf("c%d", n)
		return &Call{
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: tool, Args: json.RawMessage(`{"id":"42"}`)}}},
			Results:   []*Result{{CallID: id, Tool: tool, Full: []harness.Part{harness.TextPart(out)}, Shown: out}},
		}
	}
	answer := func(text string) *Call {
		return &Call{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}}
	}
	rec.Turns = []*Turn{
		{Input: "show order 42", Calls: []*Call{call("get_order", "order 42: open"), call("get_order", "order 42: open, 3 items"), answer("Order 42 is open.")}},
		{Input: "list customer invoices", Calls: []*Call{call("list_customer", "customer 7"), call("get_refund", "no refunds"), answer("Two invoices.")}},
	}
	return rec
}

func TestReplaySelectsToolsPerTurn(t *testing.T) {
	rec := selectionRecording()
	ctx := context.Background()
	all, err := Replay(ctx, rec, policy("all", Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := &wordSelector{}
	got, err := Replay(ctx, rec, policy("sel", Config{Selector: sel}), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Once per turn, with the new turn already in the conversation.
	if strings.Join(sel.calls, "|") != "1:show order 42|2:list customer invoices" {
		t.Errorf("selector calls %q", sel.calls)
	}
	c := tokens.CountTool
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	schemaTokens := func(names ...string) int {
		n := 0
		for _, tl := range rec.Tools {
			for _, nm := range names {
				if tl.Name == nm {
					n += c(bpe, tl)
				}
			}
		}
		return n
	}
	// Turn 1 offers the five order tools; turn 2 the six list tools and
	// the five customer tools (list_customer is both). get_refund, which
	// turn 2 does not offer, costs a reveal round before its call (Index
	// 0; TestReplayRevealsUnofferedTools).
	var recorded []CallStat
	for _, cs := range got.Calls {
		if cs.Index != 0 {
			recorded = append(recorded, cs)
		}
	}
	if len(got.Calls) != 7 || got.Calls[4].Index != 0 || len(recorded) != len(all.Calls) {
		t.Fatalf("%d requests, %d recorded: want the 6 recorded and a reveal round as the 5th", len(got.Calls), len(recorded))
	}
	wantTools := []int{5, 5, 5, 10, 10, 10}
	for i, cs := range recorded {
		if cs.Tools != wantTools[i] || all.Calls[i].Tools != 30 {
			t.Errorf("call %d offers %d tools (all: %d), want %d", i+1, cs.Tools, all.Calls[i].Tools, wantTools[i])
		}
	}
	if tt := got.Calls[0].ToolTokens; tt != schemaTokens("get_order", "list_order", "create_order", "update_order", "delete_order") {
		t.Errorf("turn 1 tool tokens %d", tt)
	}
	// The tools stay cached within a turn; turn 2's new selection breaks
	// the prefix at its first request, then is cached again.
	if recorded[1].Cached < recorded[1].ToolTokens || recorded[3].Cached != 0 || recorded[4].Cached < recorded[4].ToolTokens {
		t.Errorf("cached: %d, %d, %d", recorded[1].Cached, recorded[3].Cached, recorded[4].Cached)
	}
	if got.Usage.Input >= all.Usage.Input {
		t.Errorf("selection did not lower input: %d vs %d", got.Usage.Input, all.Usage.Input)
	}
	// get_refund was not offered in turn 2: the replay ran the recorded
	// call (after its reveal round) and reports it.
	if strings.Join(got.Unoffered, ",") != "2/c4 get_refund" || len(all.Unoffered) != 0 {
		t.Errorf("unoffered %q (all: %q)", got.Unoffered, all.Unoffered)
	}
	if len(got.Results) != 4 {
		t.Errorf("%d results replayed", len(got.Results))
	}
}

// TestReplayKeepToolsOnFinal: a synthesis call withholding tools breaks the
// cached prefix at its start; keeping the schemas (calls disabled) keeps
// it.
func TestReplayKeepToolsOnFinal(t *testing.T) {
	rec := selectionRecording()
	last := rec.Turns[0].Calls[2]
	last.Final = true
	ctx := context.Background()
	drop, err := Replay(ctx, rec, policy("drop", Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := Replay(ctx, rec, policy("keep", Config{KeepToolsOnFinal: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, k := drop.Calls[2], keep.Calls[2]
	if !d.Final || d.Tools != 0 || d.Cached != 0 {
		t.Errorf("withheld: final %v, %d tools, %d cached", d.Final, d.Tools, d.Cached)
	}
	if !k.Final || k.Tools != 30 || k.Cached != keep.Calls[1].Input-promptunit.RequestOverhead {
		t.Errorf("kept: final %v, %d tools, %d cached of %d", k.Final, k.Tools, k.Cached, keep.Calls[1].Input)
	}
	if keep.Effective >= drop.Effective {
		t.Errorf("keeping the schemas cost %.0f, withholding them %.0f", keep.Effective, drop.Effective)
	}
}

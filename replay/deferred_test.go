package replay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness/toolselect"
)

// TestReplayRevealsDeferredTools: under a deferring selector every tool
// is offered on every request, and the first call of a tool shown as a
// stub is preceded by one reveal round (an extra priced request whose
// results carry the full schema); a second call of it is not.
func TestReplayRevealsDeferredTools(t *testing.T) {
	rec := selectionRecording()
	for i := range rec.Tools {
		// A schema the stub shortens (a stub equal to the tool needs no reveal).
		rec.Tools[i].InputSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the record's id"}}}`)
	}
	ctx := context.Background()
	sel := &toolselect.Selector{Defer: true, TopK: 5}
	got, err := Replay(ctx, rec, policy("defer", Config{Selector: sel}), nil)
	if err != nil {
		t.Fatal(err)
	}
	recorded := len(rec.Turns[0].Calls) + len(rec.Turns[1].Calls)
	var reveals []CallStat
	for _, c := range got.Calls {
		if c.Index == 0 {
			reveals = append(reveals, c)
		}
		if c.Tools != len(rec.Tools) {
			t.Errorf("request %d/%d offered %d tools, want all %d (stubs included)", c.Turn, c.Round, c.Tools, len(rec.Tools))
		}
	}
	// Turn 1 calls get_order (selected: its input names it) twice; turn 2
	// calls list_customer and get_refund, which "show order 42" did not
	// select: one reveal round each.
	if len(reveals) != 2 || len(got.Calls) != recorded+2 {
		t.Fatalf("%d requests, %d reveal rounds; want %d recorded + 2 reveals", len(got.Calls), len(reveals), recorded)
	}
	for _, r := range reveals {
		if r.Turn != 2 || r.Output == 0 || r.Input == 0 {
			t.Errorf("reveal %+v: want a priced request of turn 2", r)
		}
	}
	if len(got.Unoffered) != 0 {
		t.Errorf("unoffered %v: a deferred tool is offered", got.Unoffered)
	}
	plain, err := Replay(ctx, rec, policy("all", Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Usage.Output <= plain.Usage.Output {
		t.Errorf("output %d vs %d offering all: the reveal rounds' calls must be priced", got.Usage.Output, plain.Usage.Output)
	}
}

package replayengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/replay"

	"github.com/agentharness/harness"
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

// TestReplayRevealsUnofferedTools: a recorded call of a tool the turn's
// selection did not offer is preceded by a reveal round, as a deferred
// tool's first call is: once per tool per turn that leaves the tool out
// (one round for every such tool of the recorded call), none in a turn
// that offers it, and the round's error results, carrying the full
// schema, stay in every later request. Report.Unoffered still counts
// every such call.
func TestReplayRevealsUnofferedTools(t *testing.T) {
	schema := `{"type":"object","properties":{"id":{"type":"string","description":"the record's id"}}}`
	type turn struct {
		input string
		calls [][]string // the tools of each recorded call
	}
	for _, c := range []struct {
		name  string
		turns []turn
		// reveals names, per reveal round, the recorded call it comes
		// before and the tools it teaches: "turn/call tool,...".
		reveals   []string
		unoffered int
	}{
		{"once per turn", []turn{{"show order", [][]string{{"get_refund"}, {"get_order"}, {"get_refund"}}}},
			[]string{"1/1 get_refund"}, 2},
		{"every unoffered tool of a call in one round", []turn{{"show order", [][]string{{"get_refund", "get_order", "list_coupon"}}}},
			[]string{"1/1 get_refund,list_coupon"}, 2},
		{"each turn that leaves it out", []turn{{"show order", [][]string{{"get_refund"}}}, {"show order again", [][]string{{"get_refund"}}}},
			[]string{"1/1 get_refund", "2/1 get_refund"}, 2},
		{"not in a turn that offers it", []turn{{"show order", [][]string{{"get_refund"}}}, {"refund order", [][]string{{"get_refund"}}}},
			[]string{"1/1 get_refund"}, 1},
		{"offered", []turn{{"show refund", [][]string{{"get_refund"}}}}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &replay.Recording{Source: "unoffered", ID: "unoffered", System: "sys"}
			for _, name := range []string{"get_order", "list_order", "get_refund", "list_coupon"} {
				rec.Tools = append(rec.Tools, harness.ToolSpec{Name: name, Description: "a tool of the store", InputSchema: json.RawMessage(schema)})
			}
			var where []string // "turn/call" of every recorded call, by Index
			tool := map[string]string{}
			for ti, tn := range c.turns {
				rt := &replay.Turn{Input: tn.input}
				for ci, tools := range tn.calls {
					call := &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant}}
					for k, name := range tools {
						id := fmt.Sprintf("t%dc%dk%d", ti+1, ci+1, k)
						tool[id] = name
						call.Assistant.ToolCalls = append(call.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: name, Args: json.RawMessage(`{"id":"42"}`)})
						call.Results = append(call.Results, &replay.Result{CallID: id, Tool: name, Full: []harness.Part{harness.TextPart("ok")}})
					}
					rt.Calls = append(rt.Calls, call)
					where = append(where, fmt.Sprintf("%d/%d", ti+1, ci+1))
				}
				rt.Calls = append(rt.Calls, &replay.Call{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}})
				where = append(where, "answer")
				rec.Turns = append(rec.Turns, rt)
			}
			got, err := Replay(context.Background(), rec, policy("sel", Config{Selector: &wordSelector{}}), nil)
			if err != nil {
				t.Fatal(err)
			}
			last := got.Calls[len(got.Calls)-1]
			var reveals []string
			for i, cs := range got.Calls {
				if cs.Index != 0 {
					continue
				}
				if cs.Input == 0 || cs.Output == 0 || i+1 == len(got.Calls) || got.Calls[i+1].Index == 0 {
					t.Fatalf("reveal round %+v: want a priced request right before a recorded call", cs)
				}
				at := where[got.Calls[i+1].Index-1]
				prefix := fmt.Sprintf("%st%sk", revealPrefix, strings.Replace(at, "/", "c", 1))
				var taught []string
				for _, sh := range last.Shown {
					if strings.HasPrefix(sh.CallID, prefix) {
						taught = append(taught, tool[strings.TrimPrefix(sh.CallID, revealPrefix)])
						// The engine's own error for a tool the list did
						// not offer, kept whole in every later request.
						spec := harness.ToolSpec{Name: tool[strings.TrimPrefix(sh.CallID, revealPrefix)], InputSchema: json.RawMessage(schema)}
						want := harness.ArgumentsError(&harness.View{}, spec, errRevealed).ModelText()
						if !strings.Contains(want, "Its full input schema (the tool list does not offer it): "+schema) || sh.Chars != utf8.RuneCountInString(want) {
							t.Errorf("reveal result %s shows %d chars in the last request: want the engine's error whole (%d chars: %q)", sh.CallID, sh.Chars, utf8.RuneCountInString(want), want)
						}
					}
				}
				reveals = append(reveals, at+" "+strings.Join(taught, ","))
			}
			if strings.Join(reveals, "|") != strings.Join(c.reveals, "|") {
				t.Errorf("reveal rounds %q, want %q", reveals, c.reveals)
			}
			if len(got.Unoffered) != c.unoffered {
				t.Errorf("unoffered %q, want %d calls", got.Unoffered, c.unoffered)
			}
		})
	}
}

// TestRevealChecksNeedlesAtItsRequest: the needles a recorded call first
// uses are checked against its reveal round's request, which is where the
// model wrote them first; the recorded call's own request repeats them in
// the round's calls. A guard that cuts the needle's result loses it, with
// or without a reveal round.
func TestRevealChecksNeedlesAtItsRequest(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)
	rec := &replay.Recording{Source: "needle", ID: "needle", System: "sys", Tools: []harness.ToolSpec{
		{Name: "get_order", Description: "a tool of the store", InputSchema: schema},
		{Name: "get_refund", Description: "a tool of the store", InputSchema: schema},
	}}
	call := func(id, tool, args, out string) *replay.Call {
		return &replay.Call{
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: tool, Args: json.RawMessage(args)}}},
			Results:   []*replay.Result{{CallID: id, Tool: tool, Full: []harness.Part{harness.TextPart(out)}}},
		}
	}
	rec.Turns = []*replay.Turn{{Input: "show order", Calls: []*replay.Call{
		call("c1", "get_order", `{"id":"42"}`, "order 42: open, refund REF_77231 pending"),
		call("c2", "get_refund", `{"id":"REF_77231"}`, "refund pending"),
		{Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Pending.")}}},
	}}}
	if n := Needles(rec); len(n) != 1 || n[0].Text != "REF_77231" {
		t.Fatalf("needles %+v, want REF_77231", n)
	}
	for _, c := range []struct {
		name     string
		selector harness.Selector // nil offers both tools: no reveal round
		guards   []harness.Guard
		visible  int
		reveals  int
	}{
		{"offered, whole", nil, nil, 1, 0},
		{"offered, cut", nil, []harness.Guard{headGuard(10, false)}, 0, 0},
		{"unoffered, whole", &wordSelector{}, nil, 1, 1},
		{"unoffered, cut", &wordSelector{}, []harness.Guard{headGuard(10, false)}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Replay(context.Background(), rec, policy(c.name, Config{Selector: c.selector, Guards: c.guards}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Visible != c.visible || reveals(got) != c.reveals {
				t.Errorf("visible %d of %d with %d reveal rounds, want %d with %d", got.Visible, got.Needles, reveals(got), c.visible, c.reveals)
			}
		})
	}
}

// reveals counts the reveal rounds of rep (its calls of Index 0).
func reveals(rep *Report) int {
	n := 0
	for _, c := range rep.Calls {
		if c.Index == 0 {
			n++
		}
	}
	return n
}

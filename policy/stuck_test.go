package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
)

// stuckRecorder keeps every request a model received and every event.
type stuckRecorder struct {
	mu     sync.Mutex
	reqs   []*harness.Request
	events []harness.Event
}

func (r *stuckRecorder) wrap(m harness.Model) harness.Model {
	return harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		r.mu.Lock()
		cp := *req
		cp.Messages = append([]harness.Message(nil), req.Messages...)
		r.reqs = append(r.reqs, &cp)
		r.mu.Unlock()
		return m.Generate(ctx, req)
	})
}

func (r *stuckRecorder) observe(e harness.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *stuckRecorder) policyEvents(policy string) []harness.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []harness.Event
	for _, e := range r.events {
		if e.Kind == harness.EventPolicy && e.Policy == policy {
			out = append(out, e)
		}
	}
	return out
}

func scriptCall(name, args string) scripted.Call {
	return scripted.Call{Name: name, Args: json.RawMessage(args)}
}

func boolPtr(b bool) *bool { return &b }

// lookupTool is a read-only tool answering from a fixed table; unknown
// keys are error results.
func lookupTool(answers map[string]string) harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "lookup", Description: "Look a key up.", Risk: harness.ReadOnly,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ Key string }
			if err := json.Unmarshal(c.Args, &a); err != nil {
				return nil, err
			}
			if v, ok := answers[a.Key]; ok {
				return harness.TextResult(v), nil
			}
			return harness.ErrorResult("lookup: no key %q", a.Key), nil
		},
	}
}

func runStuck(t *testing.T, steps []scripted.Step, answers map[string]string) (*harness.Result, *stuckRecorder) {
	t.Helper()
	rec := &stuckRecorder{}
	m := scripted.New(&scripted.Script{Steps: steps}, nil)
	agent, err := harness.New(rec.wrap(m), &harness.Options{
		System:    "You are a test agent.",
		Tools:     []harness.Tool{lookupTool(answers)},
		MaxRounds: 12,
		Policies:  []harness.ViewPolicy{&StuckPolicy{}},
		Observer:  rec.observe,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), harness.NewConversation("c"), "find the value")
	if err != nil {
		t.Fatal(err)
	}
	if m.Remaining() != 0 {
		t.Fatalf("%d script steps not played", m.Remaining())
	}
	return res, rec
}

// assertAppendOnly checks that each non-final request extends the one
// before it: nudges never move, so a provider's prompt cache stays warm.
func assertAppendOnly(t *testing.T, reqs []*harness.Request) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Messages, reqs[i].Messages
		if len(cur) < len(prev) {
			t.Fatalf("request %d shorter than request %d", i+1, i)
		}
		for k := range prev {
			a, _ := json.Marshal(prev[k])
			b, _ := json.Marshal(cur[k])
			if string(a) != string(b) {
				t.Fatalf("request %d changed message %d of request %d:\n%s\n%s", i+1, k, i, a, b)
			}
		}
	}
}

func TestStuckRepeatNudgesAtThreeAbortsAtSix(t *testing.T) {
	// The same call six times, spelled differently each time: key order,
	// whitespace and number spelling do not make a call new.
	spellings := []string{`{"key":"a","n":1}`, `{"n":1,"key":"a"}`, `{ "key" : "a", "n" : 1.0 }`, `{"key":"a","n":1e0}`, `{"n":1,"key":"\u0061"}`, `{"key":"a","n":1}`}
	var steps []scripted.Step
	for i, args := range spellings {
		st := scripted.Step{Text: fmt.Sprintf("try %d", i+1), ToolCalls: []scripted.Call{scriptCall("lookup", args)}}
		switch {
		case i < 3:
			st.Expect = &scripted.Expect{Round: i + 1, NotContains: []string{"You made the same calls"}}
		default: // rounds 4–6 see the one nudge after round 3, and no other
			st.Expect = &scripted.Expect{Round: i + 1, Contains: []string{"You made the same calls 3 times in a row and got the same results"},
				NotContains: []string{"4 times in a row", "5 times in a row"}}
		}
		steps = append(steps, st)
	}
	steps = append(steps, scripted.Step{
		Expect: &scripted.Expect{Round: 7, Final: boolPtr(true), Tools: new(int), Contains: []string{"Tool use was stopped", "6 rounds in a row"}},
		Text:   "The value of a is 42.",
	})
	res, rec := runStuck(t, steps, map[string]string{"a": "42"})

	if res.Outcome != harness.Stuck || res.Answer != "The value of a is 42." || res.ToolRounds != 6 || res.Requests != 7 {
		t.Fatalf("outcome %s answer %q rounds %d requests %d", res.Outcome, res.Answer, res.ToolRounds, res.Requests)
	}
	if !res.Turn.Rounds[6].Final {
		t.Fatal("synthesis round not marked final")
	}
	assertAppendOnly(t, rec.reqs[:6])
	// The streak's nudge sits right after the round that triggered it; the
	// rounds that continue the streak add none.
	final := rec.reqs[6].Messages
	var order []string
	for _, m := range final {
		if m.Role == harness.RoleUser && strings.HasPrefix(m.Text(), "Tool use was stopped") {
			order = append(order, "stop")
		} else if m.Role == harness.RoleUser && strings.Contains(m.Text(), "same calls") {
			order = append(order, "nudge")
		} else if m.Role == harness.RoleTool {
			order = append(order, "result")
		}
	}
	want := "result result result nudge result result result stop"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("final view order\n got %s\nwant %s", got, want)
	}
	evs := rec.policyEvents(stuckName)
	if len(evs) != 2 || evs[0].Data["action"] != "nudge" || evs[1].Data["action"] != "abort" || evs[0].Round != 4 {
		t.Fatalf("events: %+v", evs)
	}
}

func TestStuckAlternationABAB(t *testing.T) {
	var steps []scripted.Step
	for i := range 6 {
		key := []string{"a", "b"}[i%2]
		st := scripted.Step{ToolCalls: []scripted.Call{scriptCall("lookup", `{"key":"`+key+`"}`)}}
		if i == 4 { // after A-B-A-B
			st.Expect = &scripted.Expect{Round: 5, Contains: []string{"alternated between the same two sets of calls for 4 rounds"}}
		}
		steps = append(steps, st)
	}
	steps = append(steps, scripted.Step{Expect: &scripted.Expect{Final: boolPtr(true), Contains: []string{"alternated between the same two rounds for 6 rounds"}}, Text: "a=1, b=2"})
	res, rec := runStuck(t, steps, map[string]string{"a": "1", "b": "2"})
	if res.Outcome != harness.Stuck || res.ToolRounds != 6 {
		t.Fatalf("outcome %s after %d rounds", res.Outcome, res.ToolRounds)
	}
	if res.Turn.Rounds[len(res.Turn.Rounds)-1].Final != true {
		t.Fatal("no synthesis round")
	}
	assertAppendOnly(t, rec.reqs[:6])
}

func TestStuckRepeatedFailingCall(t *testing.T) {
	// Each round also makes a different successful call, so the rounds
	// are not identical: only the failing call repeats.
	steps := []scripted.Step{
		{ToolCalls: []scripted.Call{scriptCall("lookup", `{"key":"missing"}`), scriptCall("lookup", `{"key":"a"}`)}},
		{ToolCalls: []scripted.Call{scriptCall("lookup", `{"key":"missing"}`), scriptCall("lookup", `{"key":"b"}`)}},
		{Expect: &scripted.Expect{Round: 3, Contains: []string{`The call lookup({"key":"missing"}) failed 2 times in a row`}},
			ToolCalls: []scripted.Call{scriptCall("lookup", `{"key":"c"}`), scriptCall("lookup", `{"key":"missing"}`)}},
		{Expect: &scripted.Expect{Final: boolPtr(true), Contains: []string{"failed 3 rounds in a row"}}, Text: "missing does not exist"},
	}
	res, _ := runStuck(t, steps, map[string]string{"a": "1", "b": "2", "c": "3"})
	if res.Outcome != harness.Stuck || res.ToolRounds != 3 {
		t.Fatalf("outcome %s after %d rounds", res.Outcome, res.ToolRounds)
	}
}

func TestStuckLeavesProgressAlone(t *testing.T) {
	// Different arguments every round, and a failing call that is fixed
	// after one failure: no nudge, no stop.
	var steps []scripted.Step
	for i := range 7 {
		steps = append(steps, scripted.Step{
			Expect:    &scripted.Expect{NotContains: []string{"same calls", "alternated", "failed"}},
			ToolCalls: []scripted.Call{scriptCall("lookup", fmt.Sprintf(`{"key":"k%d"}`, i%3+i/3*10))},
		})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	answers := map[string]string{}
	for i := range 30 {
		answers[fmt.Sprintf("k%d", i)] = "v"
	}
	res, rec := runStuck(t, steps, answers)
	if res.Outcome != harness.Answered || len(rec.policyEvents(stuckName)) != 0 {
		t.Fatalf("outcome %s, events %v", res.Outcome, rec.policyEvents(stuckName))
	}
}

// Polling: the same call whose answer changes is still nudged, but told
// honestly that the results changed.
func TestStuckRepeatWithChangingResults(t *testing.T) {
	n := 0
	poll := harness.Tool{
		Spec: harness.ToolSpec{Name: "status", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			n++
			return harness.TextResult(fmt.Sprintf("pending (%d)", n)), nil
		},
	}
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "wait"}
	conv.Turns = append(conv.Turns, turn)
	for i := 1; i <= 3; i++ {
		c := harness.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "status", Args: json.RawMessage(`{}`)}
		res, _ := poll.Func(context.Background(), &c)
		res.CallID, res.Tool = c.ID, c.Name
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{c}}, Results: []*harness.ToolResult{res}})
	}
	v := harness.BuildView(conv, turn, "", nil, false)
	if err := (&StuckPolicy{}).ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	last := v.Messages[len(v.Messages)-1].Text()
	if !strings.Contains(last, "3 times in a row and the results did not bring you closer") {
		t.Fatalf("nudge: %q", last)
	}
}

func TestStuckDeterministicAndConfigurable(t *testing.T) {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "x"}
	conv.Turns = append(conv.Turns, turn)
	for i := 1; i <= 4; i++ {
		c := harness.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "t", Args: json.RawMessage(`{"a":[1,2]}`)}
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{c}},
			Results: []*harness.ToolResult{{CallID: c.ID, Tool: "t", Parts: []harness.Part{harness.TextPart("r")}}}})
	}
	build := func(p *StuckPolicy) *harness.View {
		v := harness.BuildView(conv, turn, "sys", nil, false)
		if err := p.ApplyView(context.Background(), v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, _ := json.Marshal(build(nil).Messages)
	b, _ := json.Marshal(build(&StuckPolicy{}).Messages)
	if string(a) != string(b) {
		t.Fatal("same transcript, different views")
	}
	if v := build(&StuckPolicy{AbortAfter: 4}); v.Stop != harness.Stuck || !strings.Contains(v.StopReason, "4 rounds in a row") {
		t.Fatalf("AbortAfter 4: stop %q %q", v.Stop, v.StopReason)
	}
	if v := build(&StuckPolicy{NoRepeatNudge: true, NoRepeatAbort: true}); v.Stop != "" || len(v.Messages) != 2+4*2 {
		t.Fatalf("disabled policy changed the view: %d messages, stop %q", len(v.Messages), v.Stop)
	}
	// Empty and nil views are left alone.
	if err := (&StuckPolicy{}).ApplyView(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestStuckNudgesOfEndedTurnsStay: a new turn's first request extends the
// previous turn's last one, with that turn's nudges and stop notice where
// it showed them, so the prompt cache is not broken at a turn boundary.
func TestStuckNudgesOfEndedTurnsStay(t *testing.T) {
	for _, tc := range []struct {
		name    string
		repeats int // identical rounds of the first turn: 3 nudges, 6 stops
	}{{"nudged", 4}, {"stopped", 6}} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []scripted.Step
			for i := range tc.repeats {
				steps = append(steps, scripted.Step{Text: fmt.Sprintf("try %d", i+1), ToolCalls: []scripted.Call{scriptCall("lookup", `{"key":"a"}`)}})
			}
			steps = append(steps, scripted.Step{Text: "The value of a is 42."}, scripted.Step{Text: "Still 42."})
			rec := &stuckRecorder{}
			m := scripted.New(&scripted.Script{Steps: steps}, nil)
			agent, err := harness.New(rec.wrap(m), &harness.Options{
				System: "You are a test agent.", Tools: []harness.Tool{lookupTool(map[string]string{"a": "42"})},
				MaxRounds: 12, Policies: []harness.ViewPolicy{&StuckPolicy{}},
			})
			if err != nil {
				t.Fatal(err)
			}
			conv := harness.NewConversation("c")
			for _, in := range []string{"find the value", "and again?"} {
				if _, err := agent.Run(context.Background(), conv, in); err != nil {
					t.Fatal(err)
				}
			}
			n := len(rec.reqs)
			if n != tc.repeats+2 {
				t.Fatalf("%d requests, want %d", n, tc.repeats+2)
			}
			last, first := rec.reqs[n-2], rec.reqs[n-1]
			if !strings.Contains(fmt.Sprint(last.Messages), "same calls") {
				t.Fatalf("the first turn's last request shows no nudge: %v", last.Messages)
			}
			assertAppendOnly(t, []*harness.Request{last, first})
		})
	}
}

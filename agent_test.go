package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
)

// stepModel answers with one step per call and records every request.
type stepModel struct {
	mu    sync.Mutex
	steps []func(req *harness.Request) *harness.Response
	reqs  []*harness.Request
}

func (m *stepModel) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	if len(m.steps) == 0 {
		return nil, errors.New("no more steps")
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	return step(req), nil
}

func calls(cs ...harness.ToolCall) func(*harness.Request) *harness.Response {
	return func(*harness.Request) *harness.Response {
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, ToolCalls: cs}, Usage: harness.Usage{Input: 100, Cached: 40, Output: 10}}
	}
}

func answer(text string) func(*harness.Request) *harness.Response {
	return func(*harness.Request) *harness.Response {
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}, Usage: harness.Usage{Input: 120, Cached: 100, Output: 5}}
	}
}

func call(id, name, args string) harness.ToolCall {
	return harness.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func echoTool(name string, risk harness.Risk) harness.Tool {
	return harness.Tool{
		Spec: harness.ToolSpec{Name: name, Description: "echoes its text", Risk: risk,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"],"additionalProperties":false}`)},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(c.Args, &a); err != nil {
				return nil, err
			}
			return harness.TextResult(name + ":" + a.Text), nil
		},
	}
}

func newAgent(t *testing.T, m harness.Model, opts *harness.Options) *harness.Agent {
	t.Helper()
	a, err := harness.New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRunAnswersAndAccounts(t *testing.T) {
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("a", "echo", `{"text":"hello"}`)),
		answer("done"),
	}}
	var events []harness.EventKind
	var last harness.Event
	var mu sync.Mutex
	a := newAgent(t, m, &harness.Options{System: "sys", Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)},
		Observer: func(e harness.Event) { mu.Lock(); events = append(events, e.Kind); last = e; mu.Unlock() }})
	conv := harness.NewConversation("")
	res, err := a.Run(context.Background(), conv, "say hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.Answered || res.Answer != "done" {
		t.Fatalf("outcome %s answer %q", res.Outcome, res.Answer)
	}
	if res.Requests != 2 || res.ToolRounds != 1 {
		t.Fatalf("requests %d tool rounds %d", res.Requests, res.ToolRounds)
	}
	if want := (harness.Usage{Input: 220, Cached: 140, Output: 15}); res.Usage != want {
		t.Fatalf("usage %+v, want %+v", res.Usage, want)
	}
	// effective = uncached + 0.1 cached + 4 output = 80 + 14 + 60
	if got := res.Usage.Effective(); got != 154 {
		t.Fatalf("effective %v, want 154", got)
	}
	spec := a.Tools()[0]
	if res.ToolSchemas != 2 || res.ToolSchemaBytes != 2*toolschema.Bytes(spec.Name, spec.Description, spec.InputSchema) {
		t.Fatalf("tool schemas %d (%d bytes)", res.ToolSchemas, res.ToolSchemaBytes)
	}
	if want := len("echo:hello"); res.EvidenceChars != want || res.PeakEvidenceChars != want {
		t.Fatalf("evidence %d peak %d, want %d", res.EvidenceChars, res.PeakEvidenceChars, want)
	}
	second := m.reqs[1]
	if n := len(second.Messages); n != 4 {
		t.Fatalf("second request has %d messages, want system+user+assistant+tool", n)
	}
	if tm := second.Messages[3]; tm.Role != harness.RoleTool || tm.ToolCallID != "a" || tm.Text() != "echo:hello" {
		t.Fatalf("tool message %+v", tm)
	}
	if end := last; end.Kind != harness.EventTurnEnd || end.Data["evidence_chars"] != res.EvidenceChars || end.Data["tool_schemas"] != res.ToolSchemas || end.Data["effective_tokens"] != res.Usage.Effective() {
		t.Fatalf("turn end event %+v does not carry the turn's figures", end)
	}
	want := []harness.EventKind{harness.EventTurnStart, harness.EventRequest, harness.EventResponse, harness.EventToolResult, harness.EventRequest, harness.EventResponse, harness.EventTurnEnd}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	// A driver that ends the turn itself gets the same figures, tallied
	// from the stored rounds alone.
	var ended []harness.Event
	eng, err := harness.NewEngine(&harness.Options{Observer: func(e harness.Event) { ended = append(ended, e) }})
	if err != nil {
		t.Fatal(err)
	}
	got, err := eng.EndTurn(context.Background(), conv, conv.Turns[0], res.Outcome, res.PolicyUsage, "")
	if err != nil || !reflect.DeepEqual(got, res) {
		t.Errorf("EndTurn = %+v (%v), Run's result %+v", got, err, res)
	}
	if len(ended) != 1 || !reflect.DeepEqual(ended[0].Data, last.Data) {
		t.Errorf("EndTurn's turn end events %+v, Run's figures %v", ended, last.Data)
	}
}

func TestRoundLimitEndsWithSynthesisWithoutTools(t *testing.T) {
	loop := calls(call("", "echo", `{"text":"again"}`))
	reused := calls(call("call_0", "echo", `{"text":"again"}`))
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{loop, reused, reused,
		func(req *harness.Request) *harness.Response {
			r := answer("summary")(req)
			// A model may still ask for tools on the final request; they
			// must not run.
			r.Message.ToolCalls = []harness.ToolCall{call("x", "echo", `{"text":"no"}`)}
			return r
		}}}
	var ran atomic.Int32
	tool := echoTool("echo", harness.ReadOnly)
	inner := tool.Func
	tool.Func = func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		ran.Add(1)
		return inner(ctx, c)
	}
	a := newAgent(t, m, &harness.Options{MaxRounds: 3, Tools: []harness.Tool{tool}})
	conv := harness.NewConversation("")
	res, err := a.Run(context.Background(), conv, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.RoundLimit || res.Answer != "summary" || res.ToolRounds != 3 {
		t.Fatalf("outcome %s answer %q tool rounds %d", res.Outcome, res.Answer, res.ToolRounds)
	}
	if ran.Load() != 3 {
		t.Fatalf("tool ran %d times, want 3 (the final request's calls must not run)", ran.Load())
	}
	last := m.reqs[len(m.reqs)-1]
	if !last.Final || len(last.Tools) != 0 {
		t.Fatalf("synthesis request: final=%v tools=%d", last.Final, len(last.Tools))
	}
	if st := res.Turn.Rounds[3].Stats; st.Tools != 0 || st.ToolBytes != 0 {
		t.Fatalf("synthesis request stats count %d tools (%d bytes) it did not send", st.Tools, st.ToolBytes)
	}
	if res.ToolSchemas != 3 {
		t.Fatalf("%d tool schemas counted, want 3 (one per tool round)", res.ToolSchemas)
	}
	for _, r := range m.reqs[:3] {
		if r.Final || len(r.Tools) != 1 {
			t.Fatalf("tool round request: final=%v tools=%d", r.Final, len(r.Tools))
		}
	}
	final := res.Turn.Rounds[len(res.Turn.Rounds)-1]
	if len(final.Dropped) != 1 || len(final.Assistant.ToolCalls) != 0 {
		t.Fatalf("final round: dropped %d, calls %d", len(final.Dropped), len(final.Assistant.ToolCalls))
	}
	// Call ids were missing, or repeated across rounds: they must be unique
	// in the conversation.
	seen := map[string]bool{}
	for _, r := range res.Turn.Rounds {
		for _, c := range r.Assistant.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("call id %q empty or repeated", c.ID)
			}
			seen[c.ID] = true
		}
	}
}

// barrierTool blocks until n calls are inside it at once; with a timeout so
// a serial execution fails the test instead of hanging it.
type barrier struct {
	n       int
	mu      sync.Mutex
	inside  int
	maxSeen int
	release chan struct{}
}

// hangBound is the only limit these tests put on work that should finish:
// a loaded machine never reaches it, a hang does.
const hangBound = 10 * time.Minute

func newBarrier(n int) *barrier { return &barrier{n: n, release: make(chan struct{})} }

func (b *barrier) enter() bool {
	b.mu.Lock()
	b.inside++
	b.maxSeen = max(b.maxSeen, b.inside)
	if b.inside == b.n {
		close(b.release)
	}
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.inside--; b.mu.Unlock() }()
	select {
	case <-b.release:
		return true
	case <-time.After(hangBound):
		return false
	}
}

func TestReadOnlyCallsOverlapDestructiveRunsAlone(t *testing.T) {
	b := newBarrier(3)
	var (
		mu      sync.Mutex
		order   []string
		active  atomic.Int32
		overlap atomic.Bool
	)
	track := func(name string) func() {
		if active.Add(1) > 1 && name == "write" {
			overlap.Store(true)
		}
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
		return func() { active.Add(-1) }
	}
	read := harness.Tool{Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			done := track("read")
			defer done()
			if !b.enter() {
				return harness.ErrorResult("read calls did not overlap"), nil
			}
			return harness.TextResult("read " + c.ID), nil
		}}
	write := harness.Tool{Spec: harness.ToolSpec{Name: "write", Risk: harness.Destructive},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			done := track("write")
			defer done()
			if active.Load() != 1 {
				overlap.Store(true)
			}
			time.Sleep(10 * time.Millisecond) // widen the window in which an overlap would show
			if active.Load() != 1 {
				overlap.Store(true)
			}
			return harness.TextResult("wrote " + c.ID), nil
		}}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("r1", "read", `{}`), call("r2", "read", `{}`), call("r3", "read", `{}`), call("w1", "write", `{}`), call("r4", "read", `{}`)),
		answer("ok"),
	}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{read, write}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil {
		t.Fatal(err)
	}
	results := res.Turn.Rounds[0].Results
	wantIDs := []string{"r1", "r2", "r3", "w1", "r4"}
	for i, r := range results {
		if r.CallID != wantIDs[i] {
			t.Fatalf("result %d is %s, want %s (results must be in call order)", i, r.CallID, wantIDs[i])
		}
		if r.IsError {
			t.Fatalf("%s: %s", r.CallID, r.ModelText())
		}
	}
	if b.maxSeen != 3 {
		t.Fatalf("at most %d read calls were inside at once, want 3", b.maxSeen)
	}
	if overlap.Load() {
		t.Fatal("the destructive call overlapped another call")
	}
	if fmt.Sprint(order[3:]) != "[write read]" {
		t.Fatalf("order %v: the write must come after the three reads and before r4", order)
	}
}

func TestBadInputBecomesErrorResults(t *testing.T) {
	panicky := harness.Tool{Spec: harness.ToolSpec{Name: "panicky", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) { panic("boom") }}
	failing := harness.Tool{Spec: harness.ToolSpec{Name: "failing", Risk: harness.Destructive},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return nil, errors.New("disk full")
		}}
	cases := []struct {
		name string
		call harness.ToolCall
		want []string
	}{
		{"unknown tool", call("1", "nope", `{}`), []string{`unknown tool "nope"`, "echo", "panicky"}},
		{"not JSON", call("2", "echo", `{"text": "unterminated`), []string{"not valid JSON"}},
		{"not an object", call("3", "echo", `["text"]`), []string{"must be a JSON object", "an array"}},
		{"missing field", call("4", "echo", `{}`), []string{"input schema", "missing", "text"}},
		{"wrong type", call("5", "echo", `{"text": 42}`), []string{"at /text", "string"}},
		{"extra field", call("6", "echo", `{"text": "x", "path": "/etc"}`), []string{"path"}},
		{"panic", call("7", "panicky", `{}`), []string{"crashed", "boom"}},
		{"tool error", call("9", "failing", `{}`), []string{"failing: disk full"}},
	}
	var cs []harness.ToolCall
	for _, c := range cases {
		cs = append(cs, c.call)
	}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{calls(cs...), answer("recovered")}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{echoTool("echo", harness.ReadOnly), panicky, failing}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "try everything")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.Answered || res.Answer != "recovered" {
		t.Fatalf("the loop did not go on: %s %q", res.Outcome, res.Answer)
	}
	results := res.Turn.Rounds[0].Results
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results[i]
			if !r.IsError {
				t.Fatalf("not an error result: %s", r.ModelText())
			}
			for _, w := range c.want {
				if !strings.Contains(r.ModelText(), w) {
					t.Errorf("result %q does not mention %q", r.ModelText(), w)
				}
			}
		})
	}
	// The model saw every error in the next request.
	tools := 0
	for _, msg := range m.reqs[1].Messages {
		if msg.Role == harness.RoleTool {
			tools++
			if !msg.IsError {
				t.Errorf("tool message %s not marked as error", msg.ToolCallID)
			}
		}
	}
	if tools != len(cases) {
		t.Fatalf("next request has %d tool messages, want %d", tools, len(cases))
	}
}

// A call that outlives ToolTimeout becomes a TimedOut error result. It is
// alone in its agent: a 50 ms timeout shared with calls that should finish
// would time them out too on a loaded machine.
func TestToolTimeoutBecomesErrorResult(t *testing.T) {
	slow := harness.Tool{Spec: harness.ToolSpec{Name: "slow", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			select {} // ignores its context: the agent must not wait for it
		}}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{calls(call("8", "slow", `{}`)), answer("recovered")}}
	a := newAgent(t, m, &harness.Options{ToolTimeout: 50 * time.Millisecond, Tools: []harness.Tool{slow}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "try the slow one")
	if err != nil || res.Answer != "recovered" {
		t.Fatalf("%v %+v", err, res)
	}
	r := res.Turn.Rounds[0].Results[0]
	if !r.IsError || !r.TimedOut || !strings.Contains(r.ModelText(), "timed out after 50ms") {
		t.Fatalf("%+v %q", r, r.ModelText())
	}
}

func TestCancelStopsPromptlyAndKeepsTranscriptConsistent(t *testing.T) {
	started := make(chan struct{})
	block := harness.Tool{Spec: harness.ToolSpec{Name: "block", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			close(started)
			select {} // blocks forever, ignoring ctx
		}}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{calls(call("b", "block", `{}`), call("e", "echo", `{"text":"x"}`)), answer("never")}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{block, echoTool("echo", harness.ReadOnly)}})
	ctx, cancel := context.WithCancel(context.Background())
	conv := harness.NewConversation("")
	go func() {
		<-started
		cancel()
	}()
	// The blocked call never returns and the tool timeout is 120 s: Run
	// returns before the hang bound only by honouring the cancel.
	type ran struct {
		res *harness.Result
		err error
	}
	done := make(chan ran, 1)
	go func() { res, err := a.Run(ctx, conv, "block"); done <- ran{res, err} }()
	var out ran
	select {
	case out = <-done:
	case <-time.After(hangBound):
		t.Fatal("Run did not return after cancel")
	}
	res, err := out.res, out.err
	if !errors.Is(err, context.Canceled) || res.Outcome != harness.Cancelled {
		t.Fatalf("err %v outcome %s", err, res.Outcome)
	}
	turn := conv.LastTurn()
	if len(turn.Rounds) != 1 {
		t.Fatalf("%d rounds stored", len(turn.Rounds))
	}
	r := turn.Rounds[0]
	if len(r.Results) != len(r.Assistant.ToolCalls) {
		t.Fatalf("%d calls but %d results", len(r.Assistant.ToolCalls), len(r.Results))
	}
	for i, c := range r.Assistant.ToolCalls {
		if r.Results[i] == nil || r.Results[i].CallID != c.ID {
			t.Fatalf("call %s has no result", c.ID)
		}
	}
	if !r.Results[0].IsError || !strings.Contains(r.Results[0].ModelText(), "cancelled") {
		t.Fatalf("blocked call result: %s", r.Results[0].ModelText())
	}
	if len(m.reqs) != 1 {
		t.Fatalf("the model was called %d times after cancel", len(m.reqs)-1)
	}
}

func TestModelErrorEndsTurnWithError(t *testing.T) {
	m := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		return nil, errors.New("503 upstream")
	})
	a := newAgent(t, m, nil)
	res, err := a.Run(context.Background(), harness.NewConversation(""), "hi")
	if err == nil || !strings.Contains(err.Error(), "503 upstream") || res.Outcome != harness.Error {
		t.Fatalf("err %v outcome %s", err, res.Outcome)
	}
}

func TestContextTooLargeRetriesOnceWithOverflowView(t *testing.T) {
	var overflowSeen []bool
	policy := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		overflowSeen = append(overflowSeen, v.Overflow)
		return nil
	})
	n := 0
	m := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		n++
		if n == 1 {
			return nil, fmt.Errorf("provider said 400: %w", harness.ErrContextTooLarge)
		}
		return answer("fits now")(req), nil
	})
	a := newAgent(t, m, &harness.Options{Policies: []harness.ViewPolicy{policy}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "hi")
	if err != nil || res.Answer != "fits now" {
		t.Fatalf("err %v answer %q", err, res.Answer)
	}
	if fmt.Sprint(overflowSeen) != "[false true]" {
		t.Fatalf("views built with overflow %v, want [false true]", overflowSeen)
	}
	// A second rejection is not retried again.
	m2 := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		return nil, harness.ErrContextTooLarge
	})
	res, err = newAgent(t, m2, nil).Run(context.Background(), harness.NewConversation(""), "hi")
	if !errors.Is(err, harness.ErrContextTooLarge) || res.Outcome != harness.Error {
		t.Fatalf("err %v outcome %s", err, res.Outcome)
	}
}

func TestPolicyStopWithholdsTools(t *testing.T) {
	stop := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		if len(v.Turn.Rounds) >= 2 {
			v.Stop, v.StopReason = harness.Stuck, "same calls twice"
		}
		return nil
	})
	loop := calls(call("", "echo", `{"text":"same"}`))
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{loop, loop, answer("giving up")}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)}, Policies: []harness.ViewPolicy{stop}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "loop")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.Stuck || !m.reqs[2].Final || len(m.reqs[2].Tools) != 0 {
		t.Fatalf("outcome %s, last request final=%v tools=%d", res.Outcome, m.reqs[2].Final, len(m.reqs[2].Tools))
	}
}

func TestApproverGuardsDestructiveCalls(t *testing.T) {
	var asked []string
	approver := func(ctx context.Context, c harness.ToolCall, spec harness.ToolSpec) (bool, error) {
		asked = append(asked, c.Name)
		return false, nil
	}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("1", "read", `{"text":"a"}`), call("2", "write", `{"text":"b"}`)), answer("ok")}}
	a := newAgent(t, m, &harness.Options{Approver: approver,
		Tools: []harness.Tool{echoTool("read", harness.ReadOnly), echoTool("write", harness.Destructive)}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(asked) != "[write]" {
		t.Fatalf("asked for %v, want only the destructive call", asked)
	}
	rs := res.Turn.Rounds[0].Results
	if rs[0].IsError || !rs[1].IsError || !strings.Contains(rs[1].ModelText(), "did not approve") {
		t.Fatalf("results: %q / %q", rs[0].ModelText(), rs[1].ModelText())
	}
}

func TestGuardsWrapInOrderAndSeeCallInfo(t *testing.T) {
	var trace []string
	mk := func(name string) harness.Guard {
		return func(next harness.ToolFunc) harness.ToolFunc {
			return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
				info, _ := harness.CallInfoFrom(ctx)
				trace = append(trace, fmt.Sprintf("%s>%s/%d/%d", name, info.Spec.Name, info.Turn, info.Round))
				r, err := next(ctx, c)
				trace = append(trace, "<"+name)
				return r, err
			}
		}
	}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{calls(call("1", "echo", `{"text":"a"}`)), answer("ok")}}
	a := newAgent(t, m, &harness.Options{Guards: []harness.Guard{mk("outer"), mk("inner")}, Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)}})
	if _, err := a.Run(context.Background(), harness.NewConversation(""), "go"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trace, " "); got != "outer>echo/1/1 inner>echo/1/1 <inner <outer" {
		t.Fatalf("trace %s", got)
	}
}

// A guard sees the assistant message that made its call — the agent's
// reasoning is not in the transcript until the round is answered.
func TestCallInfoCarriesTheCallingMessage(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]string{}
	)
	spy := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			info, _ := harness.CallInfoFrom(ctx)
			mu.Lock()
			defer mu.Unlock()
			if info.Message == nil {
				seen[c.ID] = "<nil>"
			} else {
				var ids []string
				for _, tc := range info.Message.ToolCalls {
					ids = append(ids, tc.ID)
				}
				seen[c.ID] = info.Message.Text() + " " + strings.Join(ids, ",")
			}
			return next(ctx, c)
		}
	}
	first := calls(call("1", "echo", `{"text":"a"}`), call("2", "echo", `{"text":"b"}`))
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		func(r *harness.Request) *harness.Response {
			resp := first(r)
			resp.Message.Parts = []harness.Part{harness.TextPart("looking for the zod version")}
			return resp
		},
		answer("ok")}}
	a := newAgent(t, m, &harness.Options{Guards: []harness.Guard{spy}, Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil {
		t.Fatal(err)
	}
	ids := res.Turn.Rounds[0].Assistant.ToolCalls
	want := "looking for the zod version " + ids[0].ID + "," + ids[1].ID
	if len(seen) != 2 || seen[ids[0].ID] != want || seen[ids[1].ID] != want {
		t.Fatalf("guards saw %q, want %q for both calls", seen, want)
	}
}

func TestNewRejectsBadTools(t *testing.T) {
	m := harness.ModelFunc(func(context.Context, *harness.Request) (*harness.Response, error) { return nil, nil })
	cases := map[string][]harness.Tool{
		"duplicate": {echoTool("a", harness.ReadOnly), echoTool("a", harness.ReadOnly)},
		"bad schema": {{Spec: harness.ToolSpec{Name: "b", InputSchema: json.RawMessage(`{"type": 12}`)},
			Func: echoTool("b", 0).Func}},
		"no func": {{Spec: harness.ToolSpec{Name: "c"}}},
	}
	for name, tools := range cases {
		if _, err := harness.New(m, &harness.Options{Tools: tools}); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestMultiTurnViewKeepsEarlierTurns(t *testing.T) {
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{answer("one"), answer("two")}}
	a := newAgent(t, m, nil)
	conv := harness.NewConversation("c1")
	for _, in := range []string{"first", "second"} {
		if _, err := a.Run(context.Background(), conv, in); err != nil {
			t.Fatal(err)
		}
	}
	req := m.reqs[1]
	var got []string
	for _, msg := range req.Messages {
		got = append(got, string(msg.Role)+":"+msg.Text())
	}
	if strings.Join(got, "|") != "user:first|assistant:one|user:second" {
		t.Fatalf("view %v", got)
	}
	if req.Turn != 2 || req.Round != 1 {
		t.Fatalf("request at turn %d round %d", req.Turn, req.Round)
	}
}

func TestPolicyModelCallsCountInTurnUsage(t *testing.T) {
	summarize := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		// A policy that calls a model (a compaction summary) says so
		// through the view.
		v.Spent = v.Spent.Add(harness.Usage{Input: 1000, Output: 50})
		return nil
	})
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{answer("ok")}}
	res, err := newAgent(t, m, &harness.Options{Policies: []harness.ViewPolicy{summarize}}).Run(context.Background(), harness.NewConversation(""), "hi")
	if err != nil {
		t.Fatal(err)
	}
	want := harness.Usage{Input: 1120, Cached: 100, Output: 55}
	if res.Usage != want || res.Turn.Usage != want || res.PolicyUsage != (harness.Usage{Input: 1000, Output: 50}) {
		t.Fatalf("usage %+v turn %+v policy %+v", res.Usage, res.Turn.Usage, res.PolicyUsage)
	}
}

func TestKeepToolsOnFinalKeepsThePrefix(t *testing.T) {
	loop := calls(call("", "echo", `{"text":"again"}`))
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{loop, answer("summary")}}
	a := newAgent(t, m, &harness.Options{MaxRounds: 1, KeepToolsOnFinal: true, Tools: []harness.Tool{echoTool("echo", harness.ReadOnly)}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "loop")
	if err != nil || res.Outcome != harness.RoundLimit {
		t.Fatalf("err %v outcome %s", err, res.Outcome)
	}
	first, final := m.reqs[0], m.reqs[1]
	if !final.Final || len(final.Tools) != 1 || final.Tools[0].Name != first.Tools[0].Name {
		t.Fatalf("final request: final=%v tools=%v", final.Final, final.Tools)
	}
	if res.ToolSchemas != 2 {
		t.Fatalf("%d tool schemas counted, want 2: the kept schemas are sent", res.ToolSchemas)
	}
}

// streamTool returns a stream of n bytes, optionally failing after it.
func streamTool(name string, src io.Reader) harness.Tool {
	return harness.Tool{Spec: harness.ToolSpec{Name: name, Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return &harness.ToolResult{Stream: io.NopCloser(src)}, nil
		}}
}

type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestUnguardedStreamsAreBoundedAndKeepPartialOutput(t *testing.T) {
	huge := io.LimitReader(neverEnding('é'), 10<<20) // 10 MiB of 2-byte runes
	broken := &failAfter{r: strings.NewReader("partial output\n"), err: errors.New("pipe broke")}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{calls(call("h", "huge", `{}`), call("b", "broken", `{}`)), answer("ok")}}
	a := newAgent(t, m, &harness.Options{MaxStreamBytes: 1<<20 + 1, Tools: []harness.Tool{streamTool("huge", huge), streamTool("broken", broken)}})
	res, err := a.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil {
		t.Fatal(err)
	}
	h, b := res.Turn.Rounds[0].Results[0], res.Turn.Rounds[0].Results[1]
	text := h.FullText()
	if !utf8.ValidString(text) {
		t.Fatal("the stopped stream was cut inside a UTF-8 sequence")
	}
	if len(text) > 1<<20+400 || !strings.Contains(text, "stopped after 1048576 bytes") || len(h.Cuts) != 1 || h.Cuts[0].Kind != harness.CutTruncated {
		t.Fatalf("huge stream: %d bytes kept, cuts %+v, tail %q", len(text), h.Cuts, text[max(0, len(text)-200):])
	}
	if !b.IsError || !strings.Contains(b.FullText(), "partial output") || !strings.Contains(b.FullText(), "pipe broke") {
		t.Fatalf("broken stream: error %v, text %q", b.IsError, b.FullText())
	}
}

type neverEnding rune

func (r neverEnding) Read(p []byte) (int, error) {
	s := string(rune(r))
	n := 0
	for n+len(s) <= len(p) {
		n += copy(p[n:], s)
	}
	return n, nil
}

// TestViewIdle: a view's Idle is the time since the engine last answered
// the conversation, on the engine's clock (Options.Now), across turns
// too; 0 before the first answer; what the context says when it says it.
func TestViewIdle(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var seen []time.Duration
	policy := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		seen = append(seen, v.Idle)
		return nil
	})
	slow := harness.Tool{Spec: harness.ToolSpec{Name: "echo", Risk: harness.ReadOnly}, Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		now = now.Add(time.Second) // the tool takes a second
		return harness.TextResult("echoed"), nil
	}}
	m := &stepModel{steps: []func(*harness.Request) *harness.Response{
		calls(call("a", "echo", `{"text":"hello"}`)), answer("one"), answer("two"),
	}}
	a := newAgent(t, m, &harness.Options{Tools: []harness.Tool{slow}, Policies: []harness.ViewPolicy{policy},
		Now: func() time.Time { return now }})
	conv := harness.NewConversation("")
	if _, err := a.Run(context.Background(), conv, "first"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Minute) // the user pauses
	if _, err := a.Run(context.Background(), conv, "second"); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, time.Second, 10 * time.Minute}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("idle per request %v, want %v", seen, want)
	}
}

// TestViewIdleAfterLoad: a conversation this process has not answered (one
// loaded from a store) whose rounds were stored without their answer time
// (Round.Answered, by an older harness) counts a turn's first request from
// the end of the turn before, and knows nothing of a later request's pause.
func TestViewIdleAfterLoad(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(10 * time.Minute)
	eng, err := harness.NewEngine(&harness.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conv := &harness.Conversation{ID: "c", Turns: []*harness.Turn{
		{Index: 1, Input: "first", Started: t0.Add(-time.Minute), Ended: t0, Outcome: harness.Answered,
			Rounds: []*harness.Round{{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("one")}}}}},
	}}
	turn, err := eng.BeginTurn(ctx, conv, "second")
	if err != nil {
		t.Fatal(err)
	}
	v, err := eng.View(ctx, conv, turn, nil, false, false)
	if err != nil || v.Idle != 10*time.Minute {
		t.Fatalf("first request after a load: Idle %s, %v; want 10m since the turn before ended", v.Idle, err)
	}
	turn.Rounds = append(turn.Rounds, &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant,
		ToolCalls: []harness.ToolCall{{ID: "x", Name: "t", Args: []byte(`{}`)}}}, Results: []*harness.ToolResult{{CallID: "x", Tool: "t"}}})
	if v, err = eng.View(ctx, conv, turn, nil, false, false); err != nil || v.Idle != 0 {
		t.Errorf("a later request of a loaded turn: Idle %s, %v; want 0 (unknown)", v.Idle, err)
	}
}

// TestNewRejectsNilModel: the README's snippet passes the model a
// provider's constructor returned with its error (no API key): a nil
// pointer in the interface, which New must refuse instead of panicking
// on the first call.
func TestNewRejectsNilModel(t *testing.T) {
	var stepNil *stepModel
	var fnNil harness.ModelFunc
	for name, m := range map[string]harness.Model{"nil": nil, "nil pointer": stepNil, "nil func": fnNil} {
		a, err := harness.New(m, nil)
		if err == nil || a != nil {
			t.Errorf("%s: New returned %v, %v; want an error", name, a, err)
		} else if !strings.Contains(err.Error(), "model") {
			t.Errorf("%s: error %q does not say the model is missing", name, err)
		}
	}
}

package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// crCall is one call of a round in the same-round collapse tests: a read
// of lines from-to of crFile, a write, or a call to a tool nobody offers.
type crCall struct {
	tool     string
	from, to int
}

func crRead(from, to int) crCall { return crCall{"read", from, to} }

var crFile = fileLines(120)

// crOutput is what the read tool returns for call.
func crOutput(call *harness.ToolCall) (*harness.ToolResult, error) {
	if call.Name == "write" {
		return harness.TextResult("ok"), nil
	}
	var a struct{ From, To int }
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, err
	}
	return harness.TextResult(lineRange(crFile, a.From, a.To)), nil
}

// crEngine is an engine with a read-only read tool, a read-only fetch
// tool that needs approval (Network) and a destructive write tool, all fn, behind the ceiling and Collapse as the default stack
// orders them.
func crEngine(t *testing.T, fn harness.ToolFunc, opts harness.Options) *harness.Engine {
	t.Helper()
	opts.Tools = []harness.Tool{
		{Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly}, Func: fn},
		{Spec: harness.ToolSpec{Name: "fetch", Risk: harness.ReadOnly | harness.Network}, Func: fn},
		{Spec: harness.ToolSpec{Name: "write", Risk: harness.Destructive}, Func: fn},
	}
	opts.Guards = append(opts.Guards, (&ResultPolicy{}).Guard(), (&Collapse{}).Guard())
	eng, err := harness.NewEngine(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// crRound is the next round of turn asking for calls, with ids c<round>_<n>.
func crRound(turn *harness.Turn, calls ...crCall) *harness.Round {
	round := &harness.Round{Index: len(turn.Rounds) + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
	for i, c := range calls {
		round.Assistant.ToolCalls = append(round.Assistant.ToolCalls, harness.ToolCall{
			ID: fmt.Sprintf("c%d_%d", round.Index, i+1), Name: c.tool, Args: fmt.Appendf(nil, `{"from":%d,"to":%d}`, c.from, c.to)})
	}
	return round
}

// crNewConv is a conversation with one empty turn.
func crNewConv() (*harness.Conversation, *harness.Turn) {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1}
	conv.Turns = append(conv.Turns, turn)
	return conv, turn
}

// collapsedOnto names the calls a result's collapse cut points at, or nil.
func collapsedOnto(res *harness.ToolResult) []string {
	for _, c := range res.Cuts {
		if c.By == CollapseName {
			return c.Refs
		}
	}
	return nil
}

// TestCollapseWithinARound pins that a call collapses onto the results of
// the calls made before it in its own round, as onto earlier rounds', and
// never onto a later call's.
func TestCollapseWithinARound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []crCall // one earlier round, when set
		calls  []crCall
		want   [][]string // per call, the calls it collapses onto
	}{
		{name: "the second of two identical reads points at the first",
			calls: []crCall{crRead(1, 40), crRead(1, 40)}, want: [][]string{nil, {"c1_1"}}},
		{name: "an overlapping read",
			calls: []crCall{crRead(1, 30), crRead(21, 60)}, want: [][]string{nil, {"c1_1"}}},
		{name: "the earlier call is not collapsed onto a later one that contains it",
			calls: []crCall{crRead(21, 40), crRead(1, 60)}, want: [][]string{nil, {"c1_1"}}},
		{name: "a read spanning two earlier reads of the round",
			calls: []crCall{crRead(1, 30), crRead(31, 60), crRead(21, 50)}, want: [][]string{nil, nil, {"c1_1", "c1_2"}}},
		{name: "a write between them: the lines were still shown",
			calls: []crCall{crRead(1, 40), {tool: "write"}, crRead(1, 40)}, want: [][]string{nil, nil, {"c1_1"}}},
		{name: "an unknown tool between them is waited for without a hang",
			calls: []crCall{crRead(1, 40), {tool: "nosuch"}, crRead(1, 40)}, want: [][]string{nil, nil, {"c1_1"}}},
		{name: "fewer repeated lines than MinLines",
			calls: []crCall{crRead(1, 30), crRead(25, 60)}, want: [][]string{nil, nil}},
		{name: "sources in an earlier round and in this one",
			before: []crCall{crRead(1, 30)}, calls: []crCall{crRead(31, 60), crRead(21, 50)}, want: [][]string{nil, {"c1_1", "c2_1"}}},
		{name: "a call of this round repeating an earlier round",
			before: []crCall{crRead(1, 40)}, calls: []crCall{crRead(1, 40), crRead(1, 40)}, want: [][]string{{"c1_1"}, {"c1_1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := crEngine(t, func(_ context.Context, c *harness.ToolCall) (*harness.ToolResult, error) { return crOutput(c) }, harness.Options{})
			conv, turn := crNewConv()
			if tc.before != nil {
				r := crRound(turn, tc.before...)
				r.Results = eng.RunCalls(context.Background(), conv, turn, r, nil)
				turn.Rounds = append(turn.Rounds, r)
			}
			round := crRound(turn, tc.calls...)
			rs := eng.RunCalls(context.Background(), conv, turn, round, nil)
			for i, r := range rs {
				if got := collapsedOnto(r); !slices.Equal(got, tc.want[i]) {
					t.Errorf("call %d collapses onto %v, want %v:\n%.200s", i+1, got, tc.want[i], r.ModelText())
				}
				if tc.calls[i].tool == "read" && r.FullText() != lineRange(crFile, tc.calls[i].from, tc.calls[i].to) {
					t.Errorf("call %d: the stored output changed", i+1)
				}
			}
		})
	}
}

// TestCollapseWithinARoundOutOfOrder: the calls of a round run in parallel
// and finish in reverse order (each tool returns only after the next
// call's has); the outcome is the one call order gives, with no deadlock.
func TestCollapseWithinARoundOutOfOrder(t *testing.T) {
	const n = 3
	var (
		returned [n]chan struct{}
		mu       sync.Mutex
		order    []string
	)
	for i := range returned {
		returned[i] = make(chan struct{})
	}
	tool := func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		var k int
		fmt.Sscanf(call.ID, "c1_%d", &k)
		if k < n {
			select {
			case <-returned[k]: // call k+1 (0-based k) has returned
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		mu.Lock()
		order = append(order, call.ID)
		mu.Unlock()
		defer close(returned[k-1])
		return crOutput(call)
	}
	eng := crEngine(t, tool, harness.Options{})
	conv, turn := crNewConv()
	round := crRound(turn, crRead(1, 40), crRead(1, 40), crRead(11, 50))
	rs := eng.RunCalls(context.Background(), conv, turn, round, nil)
	if !slices.Equal(order, []string{"c1_3", "c1_2", "c1_1"}) {
		t.Fatalf("the tools returned in order %v", order)
	}
	for i, want := range [][]string{nil, {"c1_1"}, {"c1_1"}} {
		if got := collapsedOnto(rs[i]); !slices.Equal(got, want) {
			t.Errorf("call %d collapses onto %v, want %v", i+1, got, want)
		}
	}
}

// TestCollapseWaitEnds: a call waiting for an earlier call of its round is
// released when its context is cancelled, and stops waiting before its
// own deadline, keeping its output, when the earlier call is slower.
func TestCollapseWaitEnds(t *testing.T) {
	t.Run("cancellation releases the waiter", func(t *testing.T) {
		release, ran, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
		defer close(release)
		tool := func(_ context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if call.ID == "c1_1" {
				<-release // ignores its context: only cancelling the waiter can free it
			} else {
				close(ran)
			}
			return crOutput(call)
		}
		probe := func(next harness.ToolFunc) harness.ToolFunc {
			return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
				res, err := next(ctx, call)
				if call.ID == "c1_2" {
					close(returned)
				}
				return res, err
			}
		}
		eng := crEngine(t, tool, harness.Options{ToolTimeout: time.Hour, Guards: []harness.Guard{probe}})
		conv, turn := crNewConv()
		round := crRound(turn, crRead(1, 40), crRead(1, 40))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan []*harness.ToolResult, 1)
		go func() { done <- eng.RunCalls(ctx, conv, turn, round, nil) }()
		<-ran
		cancel()
		select {
		case <-returned:
		case <-time.After(2 * time.Minute):
			t.Fatal("the second call's guards still wait after the cancellation")
		}
		if rs := <-done; !rs[1].IsError {
			t.Errorf("the cancelled round's second result: %.200s", rs[1].ModelText())
		}
	})
	t.Run("a slow earlier call does not make a finished one time out", func(t *testing.T) {
		// The first call (a fetch: asked for approval) starts only after
		// the second has run, so its deadline is after the second's, and
		// returns only once the second's result is out: waiting to the
		// end, the second would be reported as timed out. It gives up
		// 10 s before its 20 s timeout instead, which leaves the rest of
		// the chain 10 s: a bound only a hang misses, on a loaded machine.
		ran, release := make(chan struct{}), make(chan struct{})
		tool := func(_ context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if call.ID == "c1_1" {
				<-release
			} else {
				close(ran)
			}
			return crOutput(call)
		}
		approve := func(_ context.Context, call harness.ToolCall, _ harness.ToolSpec) (bool, error) {
			<-ran
			return true, nil
		}
		obs := func(e harness.Event) {
			if e.Kind == harness.EventToolResult && e.Call != nil && e.Call.ID == "c1_2" {
				close(release)
			}
		}
		eng := crEngine(t, tool, harness.Options{ToolTimeout: 20 * time.Second, Observer: obs, Approver: approve})
		conv, turn := crNewConv()
		round := crRound(turn, crCall{"fetch", 1, 40}, crRead(1, 40))
		rs := eng.RunCalls(context.Background(), conv, turn, round, nil)
		if r := rs[1]; r.TimedOut || r.IsError || len(r.Cuts) > 0 || r.ModelText() != lineRange(crFile, 1, 40) {
			t.Errorf("the second call: timed out %v, cuts %+v:\n%.200s", r.TimedOut, r.Cuts, r.ModelText())
		}
		if r := rs[0]; r.TimedOut || len(r.Cuts) > 0 {
			t.Errorf("the first call: timed out %v, cuts %+v", r.TimedOut, r.Cuts)
		}
	})
}

func TestRoundWait(t *testing.T) {
	ctx, cancel := roundWait(context.Background())
	cancel()
	if _, ok := ctx.Deadline(); ok || ctx.Err() != nil {
		t.Error("a context without a deadline should be waited under as it is")
	}
	for _, left := range []time.Duration{time.Hour, 10 * time.Second} {
		parent, stop := context.WithTimeout(context.Background(), left)
		pd, _ := parent.Deadline()
		ctx, cancel := roundWait(parent)
		d, _ := ctx.Deadline()
		// Half of what is left, at most maxRoundWaitMargin, before the
		// parent's deadline (time.Until ran a little after WithTimeout).
		margin := pd.Sub(d)
		if want := min(left/2, maxRoundWaitMargin); margin > want || margin < want-time.Minute/2 {
			t.Errorf("%v left: the wait ends %v before the deadline, want about %v", left, margin, want)
		}
		cancel()
		stop()
	}
}

// TestCollapseWithinARoundReloaded: the round collapses the same whether
// the conversation is live, reloaded from its JSON (as from a store), its
// calls admitted one by one (the replay, a durable workflow), or decided
// from a transcript that already holds the whole round (a proxy's rebuilt
// history).
func TestCollapseWithinARoundReloaded(t *testing.T) {
	fn := func(_ context.Context, c *harness.ToolCall) (*harness.ToolResult, error) { return crOutput(c) }
	eng := crEngine(t, fn, harness.Options{})
	conv, turn := crNewConv()
	first := crRound(turn, crRead(1, 40))
	first.Results = eng.RunCalls(context.Background(), conv, turn, first, nil)
	turn.Rounds = append(turn.Rounds, first)
	stored, err := json.Marshal(conv)
	if err != nil {
		t.Fatal(err)
	}
	reload := func(t *testing.T) (*harness.Conversation, *harness.Turn) {
		var c harness.Conversation
		if err := json.Unmarshal(stored, &c); err != nil {
			t.Fatal(err)
		}
		return &c, c.Turns[0]
	}
	calls := []crCall{crRead(21, 70), crRead(41, 90), crRead(61, 100)}
	live := eng.RunCalls(context.Background(), conv, turn, crRound(turn, calls...), nil)
	if got := collapsedOnto(live[2]); !slices.Equal(got, []string{"c2_1", "c2_2"}) {
		t.Fatalf("live: the third call collapses onto %v", got)
	}
	same := func(t *testing.T, rs []*harness.ToolResult) {
		t.Helper()
		for i := range live {
			if rs[i].ModelText() != live[i].ModelText() || !reflect.DeepEqual(rs[i].Cuts, live[i].Cuts) {
				t.Errorf("call %d: %+v\n%.200s\nlive: %+v\n%.200s", i+1, rs[i].Cuts, rs[i].ModelText(), live[i].Cuts, live[i].ModelText())
			}
		}
	}
	t.Run("reloaded", func(t *testing.T) {
		c, tr := reload(t)
		same(t, crEngine(t, fn, harness.Options{}).RunCalls(context.Background(), c, tr, crRound(tr, calls...), nil))
	})
	t.Run("admitted one by one", func(t *testing.T) {
		c, tr := reload(t)
		e := crEngine(t, fn, harness.Options{})
		round := crRound(tr, calls...)
		info := e.CallInfo(c, tr, round, nil)
		info.Spec = harness.ToolSpec{Name: "read", Risk: harness.ReadOnly}
		var rs []*harness.ToolResult
		for _, call := range round.Assistant.ToolCalls {
			recorded, _ := crOutput(&call)
			rs = append(rs, e.Admit(context.Background(), info, call, harness.Returning(recorded)))
		}
		same(t, rs)
	})
	t.Run("the transcript holds the whole round", func(t *testing.T) {
		// A driver's own CallInfo (no round results) over a history that
		// already has every result of the round, the later ones included:
		// each call still collapses onto the earlier ones only.
		c, tr := reload(t)
		round := crRound(tr, calls...)
		tr.Rounds = append(tr.Rounds, round)
		e := crEngine(t, fn, harness.Options{})
		var rs []*harness.ToolResult
		for _, call := range round.Assistant.ToolCalls {
			round.Results = append(round.Results, &harness.ToolResult{CallID: call.ID, Tool: call.Name, Parts: []harness.Part{harness.TextPart("stand-in for a later result")}})
		}
		for i, call := range round.Assistant.ToolCalls {
			info := harness.CallInfo{Conversation: c.ID, Turn: tr.Index, Round: round.Index, Transcript: c, Message: &round.Assistant,
				Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly}}
			recorded, _ := crOutput(&call)
			res := e.Admit(context.Background(), info, call, harness.Returning(recorded))
			round.Results[i] = res
			rs = append(rs, res)
		}
		same(t, rs)
	})
}

package harness

import (
	"context"
	"testing"
)

func TestRoundResults(t *testing.T) {
	calls := []ToolCall{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	info := CallInfo{Message: &Message{ToolCalls: calls}, round: newRoundResults()}
	ra, rb := TextResult("a"), TextResult("b")
	info.round.done("a", ra)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		info CallInfo
		call *ToolCall
		want []*ToolResult
	}{
		{"first call has none before it", info, &calls[0], []*ToolResult{}},
		{"a call not yet run is nil", info, &calls[2], []*ToolResult{ra, nil}},
		{"not a call of the round", info, &ToolCall{ID: "x"}, nil},
		{"a CallInfo made by hand knows none", CallInfo{Message: info.Message}, &calls[1], nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.info.RoundResults(ctx, c.call)
			if len(got) != len(c.want) || (c.want == nil && got != nil) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("result %d: got %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
	t.Run("an expected call is waited for", func(t *testing.T) {
		info.round.expect(calls)
		got := make(chan []*ToolResult)
		go func() { got <- info.RoundResults(ctx, &calls[2]) }()
		info.round.done("b", rb)
		if rs := <-got; len(rs) != 2 || rs[0] != ra || rs[1] != rb {
			t.Fatalf("got %v", rs)
		}
	})
	t.Run("waiting ends with ctx", func(t *testing.T) {
		r := newRoundResults()
		r.expect(calls[:1])
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if rs := (CallInfo{Message: &Message{ToolCalls: calls}, round: r}).RoundResults(cctx, &calls[1]); len(rs) != 1 || rs[0] != nil {
			t.Fatalf("got %v", rs)
		}
	})
}

func TestWithRoundResults(t *testing.T) {
	calls := []ToolCall{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	msg := &Message{ToolCalls: calls}
	ra, rb, stray := TextResult("a"), TextResult("b"), TextResult("x")
	ra.CallID, rb.CallID, stray.CallID = "a", "b", "x"
	fresh := CallInfo{Message: msg, round: newRoundResults()}
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		info    CallInfo
		results []*ToolResult
		call    *ToolCall
		want    []*ToolResult
	}{
		{"the earlier calls' results, in call order", fresh, []*ToolResult{rb, ra}, &calls[2], []*ToolResult{ra, rb}},
		{"only calls before the call", fresh, []*ToolResult{ra, rb}, &calls[1], []*ToolResult{ra}},
		{"a call not given is nil", fresh, []*ToolResult{rb}, &calls[2], []*ToolResult{nil, rb}},
		{"nil and stray results are ignored", fresh, []*ToolResult{nil, stray, {Parts: []Part{TextPart("no id")}}, ra}, &calls[2], []*ToolResult{ra, nil}},
		{"none given: every earlier call nil", fresh, nil, &calls[2], []*ToolResult{nil, nil}},
		{"a CallInfo made by hand answers too", CallInfo{Message: msg}, []*ToolResult{ra}, &calls[1], []*ToolResult{ra}},
		{"without a Message nothing", CallInfo{}, []*ToolResult{ra}, &calls[1], nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.info.WithRoundResults(c.results...).RoundResults(ctx, c.call)
			if len(got) != len(c.want) || (c.want == nil) != (got == nil) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("result %d: got %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
	t.Run("the copies share nothing", func(t *testing.T) {
		info := CallInfo{Message: msg, round: newRoundResults()}
		info.round.expect(calls) // a pending call of info is not waited for by the copy
		with := info.WithRoundResults(ra)
		with.round.done("b", rb)
		if got := with.RoundResults(ctx, &calls[2]); len(got) != 2 || got[0] != ra || got[1] != rb {
			t.Fatalf("copy: got %v", got)
		}
		info.round.done("a", TextResult("other"))
		if got := with.RoundResults(ctx, &calls[1]); len(got) != 1 || got[0] != ra {
			t.Fatalf("copy after info collected: got %v", got)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if got := info.RoundResults(cctx, &calls[2]); len(got) != 2 || got[1] != nil {
			t.Fatalf("info saw the copy's call: got %v", got)
		}
	})
}

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

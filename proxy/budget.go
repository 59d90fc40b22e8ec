package proxy

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/stack"
)

// arrivalBudget applies the turn's evidence budget (policy.TurnBudget) to
// the results of one request as they first arrive, so the prompt cache
// stays warm: a result already forwarded keeps the bytes it was sent with,
// and the results new in this request share what the turn has left (the
// budget minus the model copies of the turn's earlier results) by
// water-filling. Their trimmed copy becomes their decision, sent the same
// every time after. Only the turn's first TurnBudget.Rounds rounds (default
// harness.DefaultMaxRounds) share the budget (TurnBudget.Arrive): a long
// turn's later results pass whole, as the engine's OnArrival leaves them,
// instead of each arriving at the floor once the budget is spent.
type arrivalBudget struct {
	tb *policy.TurnBudget // nil: no budget
}

// turnBudget is the arrival budget of a stack configuration: its
// TurnBudget (nil is the defaults), or none with NoTurnBudget.
func turnBudget(c stack.Config) arrivalBudget {
	if c.NoTurnBudget {
		return arrivalBudget{}
	}
	tb := policy.TurnBudget{}
	if c.TurnBudget != nil {
		tb = *c.TurnBudget
	}
	if tb.Spill == nil && c.Ceiling != nil {
		// No recall tool behind the proxy: a trim names a spill file.
		tb.Spill = c.Ceiling.Store
	}
	return arrivalBudget{tb: &tb}
}

// apply trims the fresh results of each turn of h (those decided in this
// request) of conversation conv to the turn's remaining budget.
func (b arrivalBudget) apply(ctx context.Context, conv string, h *history, fresh map[*wireResult]bool) error {
	if b.tb == nil || len(fresh) == 0 {
		return nil
	}
	byTurn := map[int][]*wireResult{}
	spent := map[int]int{}
	var order []int
	for _, r := range h.Results {
		if r.dec == nil || r.dec.res == nil {
			continue
		}
		if !fresh[r] {
			spent[r.Turn] += r.dec.shownChars() // counted once per copy
			continue
		}
		if _, seen := byTurn[r.Turn]; !seen {
			order = append(order, r.Turn)
		}
		byTurn[r.Turn] = append(byTurn[r.Turn], r)
	}
	for _, t := range order {
		if err := b.fill(ctx, conv, t, byTurn[t], spent[t]); err != nil {
			return err
		}
	}
	return nil
}

// fill trims rs, the fresh results of turn t, to the turn's budget less
// spent, through TurnBudget.Arrive on a view that holds only them.
func (b arrivalBudget) fill(ctx context.Context, conv string, t int, rs []*wireResult, spent int) error {
	v := &harness.View{Turn: &harness.Turn{Index: t}, Conversation: &harness.Conversation{ID: conv}}
	for _, r := range rs {
		res := r.dec.res
		v.Messages = append(v.Messages, harness.Message{Role: harness.RoleTool, ToolCallID: res.CallID, ToolName: res.Tool,
			IsError: res.IsError, Parts: []harness.Part{harness.TextPart(res.ModelText())}})
		v.Origins = append(v.Origins, harness.Origin{Turn: t, Round: r.Round, Result: res})
	}
	if _, err := b.tb.Arrive(ctx, v, spent); err != nil {
		return fmt.Errorf("proxy: turn budget: %w", err)
	}
	for i, r := range rs {
		if len(v.Origins[i].Cuts) == 0 {
			continue
		}
		res := r.dec.res
		res.Model = v.Messages[i].Parts
		res.Cuts = append(res.Cuts, v.Origins[i].Cuts...)
		r.dec.out = r.Encode(res.ModelText())
	}
	return nil
}

package guard

import (
	"context"
	"time"

	"github.com/agentharness/harness"
)

// earlier is a result of a call made before the one a guard decides: where
// it was made, the call (nil when the transcript lacks it) and the result
// as stored.
type earlier struct {
	turn, round int
	call        *harness.ToolCall
	res         *harness.ToolResult
}

// shown reports whether the model still sees e's result whole. It is the
// one rule by which the guards that point at an earlier result instead of
// repeating it (Collapse, Dedupe) choose what they may point at:
// harness.CallInfo.StillShown.
func (e earlier) shown(info harness.CallInfo) bool {
	return info.StillShown(e.turn, e.round, e.res)
}

// transcriptResults lists the results of info's transcript, oldest first.
func transcriptResults(info harness.CallInfo) []earlier {
	if info.Transcript == nil {
		return nil
	}
	var out []earlier
	for _, t := range info.Transcript.Turns {
		if t == nil {
			continue
		}
		for _, r := range t.Rounds {
			if r == nil {
				continue
			}
			for _, res := range r.Results {
				if res != nil {
					out = append(out, earlier{turn: t.Index, round: r.Index, call: findCall(r.Assistant.ToolCalls, res.CallID), res: res})
				}
			}
		}
	}
	return out
}

// resultsBefore lists every result made before call, oldest first: the
// transcript's (a snapshot taken as call's round began), then, withRound,
// those of the calls made before call in its own round, waiting for any
// still running beside it (harness.CallInfo.RoundResults) as long as
// roundWait allows. A result the transcript already holds is listed once.
func resultsBefore(ctx context.Context, info harness.CallInfo, call *harness.ToolCall, withRound bool) []earlier {
	var roundCalls []harness.ToolCall
	if info.Message != nil {
		roundCalls = info.Message.ToolCalls
	}
	// Calls of this round from call on have no result yet, whatever a
	// driver's transcript holds.
	notYet := map[string]bool{call.ID: true}
	for i, c := range roundCalls {
		if c.ID == call.ID {
			for _, later := range roundCalls[i:] {
				notYet[later.ID] = true
			}
			break
		}
	}
	listed := map[string]bool{}
	var out []earlier
	for _, e := range transcriptResults(info) {
		if !notYet[e.res.CallID] {
			out = append(out, e)
			listed[e.res.CallID] = true
		}
	}
	if !withRound {
		return out
	}
	wctx, cancel := roundWait(ctx)
	defer cancel()
	for i, res := range info.RoundResults(wctx, call) {
		if res != nil && !listed[res.CallID] {
			out = append(out, earlier{turn: info.Turn, round: info.Round, call: &roundCalls[i], res: res})
		}
	}
	return out
}

// maxRoundWaitMargin bounds the margin roundWait keeps before a deadline.
const maxRoundWaitMargin = 10 * time.Second

// roundWait is the context a call waits for the earlier calls of its round
// under: ctx, ended early when ctx has a deadline (the tool timeout the
// guards run under): maxRoundWaitMargin before it, or half-way there when
// less than twice that is left. A call whose own tool has finished must
// not be reported as timed out because an earlier call beside it is slow
// (the engine gives up on a call at its deadline, guards included): it
// stops waiting in time and decides from the earlier results that have
// completed. Only an earlier call that runs that long is left out, and
// one that runs to its own timeout leaves an error, which nothing
// collapses onto or repeats.
func roundWait(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	margin := min(time.Until(deadline)/2, maxRoundWaitMargin)
	return context.WithDeadline(ctx, deadline.Add(-margin))
}

// findCall returns the call of calls with the given id, or nil.
func findCall(calls []harness.ToolCall, id string) *harness.ToolCall {
	for i := range calls {
		if calls[i].ID == id {
			return &calls[i]
		}
	}
	return nil
}

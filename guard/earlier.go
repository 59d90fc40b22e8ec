package guard

import (
	"context"

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
// still running beside it (harness.CallInfo.RoundResults). A result the
// transcript already holds is listed once.
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
	for i, res := range info.RoundResults(ctx, call) {
		if res != nil && !listed[res.CallID] {
			out = append(out, earlier{turn: info.Turn, round: info.Round, call: &roundCalls[i], res: res})
		}
	}
	return out
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

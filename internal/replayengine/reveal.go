package replayengine

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentharness/harness/replay"
	"slices"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/toolselect"
)

// revealPrefix starts the call ids of a reveal round (see reveal).
const revealPrefix = "reveal-"

// errRevealed is what a reveal round's calls are told of their
// arguments: the replay does not know how a live model's guess went
// wrong, only that it did not fit the schema the list hid.
var errRevealed = errors.New("the arguments do not fit its input schema")

// revealKey names what a reveal round taught: the full schema of tool,
// for the whole conversation (turn 0) or for one turn.
type revealKey struct {
	turn int
	tool string
}

// reveal adds, before recorded call rc, the round a live model would
// spend learning the schema of a tool that the request's list does not
// show whole. Two cases, priced the same way:
//
//   - a deferred tool (toolselect.Selector.Defer), which the list shows
//     only as a short form: one round per conversation, the first call
//     of it, since the stub stays in every later list and the schema in
//     the history;
//   - a tool the turn's selection did not offer at all (Report.Unoffered):
//     one round per turn whose list leaves it out, at the turn's first
//     call of it; a later turn whose selection offers it needs none.
//
// The replay assumes the model's first call failed the full schema and
// the engine answered with that schema (harness.Engine's argument check
// does so for both cases). The round is one more request, the calls'
// output tokens, and the error results, which stay in the history of
// every later request. It is the costly case: a model that gets the
// arguments right from the short form, or from an earlier turn's
// result, spends nothing. The round's request is a CallStat of the
// report with Index 0 (Turn and Round say where), so the bench prices
// it. The needles rc (call ci of turn ti) first uses are checked against
// the round's request, not rc's: the round's calls repeat rc's
// arguments, so rc's request would show them whatever the policy kept.
// added says a round was added (a reveal round, or a recovery round
// before it).
func (e *engine) reveal(ctx context.Context, turn *harness.Turn, rc *replay.Call, ti, ci int) (added bool, err error) {
	var calls []harness.ToolCall
	var specs []harness.ToolSpec
	var keys []revealKey
	for _, c := range rc.Assistant.ToolCalls {
		full, key, ok := e.hidden(turn.Index, c.Name)
		if !ok || e.revealed[key] || slices.Contains(keys, key) {
			continue
		}
		calls = append(calls, harness.ToolCall{ID: revealPrefix + c.ID, Name: c.Name, Args: c.Args})
		specs, keys = append(specs, full), append(keys, key)
	}
	if len(calls) == 0 {
		return false, nil
	}
	view, req, err := e.eng.Request(ctx, e.conv, turn, e.tools, false, false)
	if err != nil {
		return false, fmt.Errorf("replay: %s: %w", e.rec.Source, err)
	}
	if view.Final || view.Stop != "" {
		return false, nil // no tool round here: the recorded call's own request decides
	}
	if view, req, err = e.checked(ctx, turn, view, req, false, ti, ci); err != nil {
		return false, err
	}
	if view.Final || view.Stop != "" {
		return true, nil // a recovery round was sent, and rc's needles checked
	}
	results := make([]*harness.ToolResult, len(calls))
	for i, c := range calls {
		// The engine's own error for the view: it says why the list
		// did not show the schema and carries it whole.
		results[i] = harness.ArgumentsError(view, specs[i], errRevealed)
		results[i].CallID, results[i].Tool = c.ID, c.Name
	}
	out := 0
	for _, c := range calls {
		out += e.opts.Counter.Count(c.Name) + e.opts.Counter.Count(string(c.Args))
	}
	round := e.addedRound(ctx, turn, view, req, harness.Message{Role: harness.RoleAssistant, ToolCalls: calls}, out)
	info := e.eng.CallInfo(e.conv, turn, round, view)
	for i, c := range calls {
		info.Spec = specs[i]
		round.Results = append(round.Results, e.eng.Admit(ctx, info, c, harness.Returning(results[i])))
	}
	if err := e.eng.AppendRound(ctx, e.conv, turn, round); err != nil {
		return false, fmt.Errorf("replay: %w", err)
	}
	for _, k := range keys {
		e.revealed[k] = true
	}
	return true, nil
}

// hidden reports whether the current list does not show tool name's
// recorded schema: it shows a short form (a deferred tool), or the
// turn's selection did not offer it. It returns the recording's spec and
// the key a reveal round marks.
func (e *engine) hidden(turn int, name string) (full harness.ToolSpec, key revealKey, ok bool) {
	if full, ok := e.deferred(name); ok {
		return full, revealKey{tool: name}, true
	}
	if full, ok := e.unoffered(name); ok {
		return full, revealKey{turn: turn, tool: name}, true
	}
	return harness.ToolSpec{}, revealKey{}, false
}

// deferred reports whether the current list offers tool name in another
// form than the recording's (a selector's stub), and returns the
// recording's.
func (e *engine) deferred(name string) (harness.ToolSpec, bool) {
	if e.cfg.Selector == nil {
		return harness.ToolSpec{}, false
	}
	i := slices.IndexFunc(e.tools, func(t harness.ToolSpec) bool { return t.Name == name })
	j := slices.IndexFunc(e.rec.Tools, func(t harness.ToolSpec) bool { return t.Name == name })
	if i < 0 || j < 0 {
		return harness.ToolSpec{}, false
	}
	shown, full := e.tools[i], e.rec.Tools[j]
	return full, toolselect.Shortened(shown, full)
}

// unoffered reports whether tool name is one the recording offered but
// the policy's selection left out of the current list, and returns the
// recording's spec. Without a selector the list is the recording's own,
// and a call outside it is the recording's business, not a selection's.
func (e *engine) unoffered(name string) (harness.ToolSpec, bool) {
	if e.cfg.Selector == nil || slices.ContainsFunc(e.tools, func(t harness.ToolSpec) bool { return t.Name == name }) {
		return harness.ToolSpec{}, false
	}
	j := slices.IndexFunc(e.rec.Tools, func(t harness.ToolSpec) bool { return t.Name == name })
	if j < 0 {
		return harness.ToolSpec{}, false
	}
	return e.rec.Tools[j], true
}

// addedRound answers req, the request built from v, with msg (out output
// tokens) and counts the request in the report as a CallStat of Index 0:
// a round the replay adds to the recording (a reveal, a recovery), which
// the caller gives its results and appends.
func (e *engine) addedRound(ctx context.Context, turn *harness.Turn, v *harness.View, req *harness.Request, msg harness.Message, out int) *harness.Round {
	e.model.next = &replay.Call{Assistant: msg, Usage: harness.Usage{Output: out}}
	resp, _ := e.model.Generate(ctx, req)
	round := e.eng.Round(ctx, e.conv, turn, v, resp)
	st := e.measure(v, round.Stats.EvidenceChars, e.model.count)
	st.Turn, st.Round, st.Output = turn.Index, v.Round, out
	e.report.Calls = append(e.report.Calls, st)
	e.report.Usage = e.report.Usage.Add(st.Usage())
	return round
}

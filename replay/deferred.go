package replay

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/toolselect"
)

// revealPrefix starts the call ids of a reveal round (see reveal).
const revealPrefix = "reveal-"

// reveal adds, before recorded call rc, the round a live model would
// spend on a deferred tool (toolselect.Selector.Defer): when rc calls a
// tool that the offered list shows only as a short form, and no earlier
// round of the conversation revealed it, the replay assumes the model's
// first call of it failed the full schema, and the engine answered with
// that schema (harness.Engine's argument check). The round is one more
// request, the calls' output tokens, and the error results, which stay
// in the history of every later request. It is the costly case: a model
// that gets the arguments right from the short form spends nothing. The
// round's request is a CallStat of the report (Turn and Round say
// where), so the bench prices it; it uses no needle.
func (e *engine) reveal(ctx context.Context, turn *harness.Turn, rc *Call) error {
	var calls []harness.ToolCall
	var specs []harness.ToolSpec
	for _, c := range rc.Assistant.ToolCalls {
		full, ok := e.deferred(c.Name)
		if !ok || e.revealed[c.Name] || slices.ContainsFunc(calls, func(r harness.ToolCall) bool { return r.Name == c.Name }) {
			continue
		}
		calls = append(calls, harness.ToolCall{ID: revealPrefix + c.ID, Name: c.Name, Args: c.Args})
		specs = append(specs, full)
	}
	if len(calls) == 0 {
		return nil
	}
	view, req, err := e.eng.Request(ctx, e.conv, turn, e.tools, false, false)
	if err != nil {
		return fmt.Errorf("replay: %s: %w", e.rec.Source, err)
	}
	if view.Final || view.Stop != "" {
		return nil // no tool round here: the recorded call's own request decides
	}
	out := 0
	for _, c := range calls {
		out += e.opts.Counter.Count(c.Name) + e.opts.Counter.Count(string(c.Args))
	}
	msg := harness.Message{Role: harness.RoleAssistant, ToolCalls: calls}
	e.model.next = &Call{Assistant: msg, Usage: harness.Usage{Output: out}}
	resp, _ := e.model.Generate(ctx, req)
	round := e.eng.Round(ctx, e.conv, turn, view, resp)
	st := e.measure(view, round.Stats.EvidenceChars, e.model.count)
	st.Turn, st.Round, st.Output = turn.Index, view.Round, out
	e.report.Calls = append(e.report.Calls, st)
	e.report.Usage = e.report.Usage.Add(st.Usage())
	info := e.eng.CallInfo(e.conv, turn, round, view)
	for i, c := range calls {
		info.Spec = specs[i]
		res := harness.ErrorResult("%s: the arguments do not fit its full input schema (the tool list shows a short form): %s. Fix the arguments and call again.", c.Name, specs[i].InputSchema)
		res.CallID, res.Tool = c.ID, c.Name
		round.Results = append(round.Results, e.eng.Admit(ctx, info, c, harness.Returning(res)))
	}
	if err := e.eng.AppendRound(ctx, e.conv, turn, round); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	for _, c := range calls {
		e.revealed[c.Name] = true
	}
	return nil
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

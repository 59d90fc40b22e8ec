package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness/internal/toolschema"
)

// RunCalls runs the calls of round, whose request was built from view,
// with the engine's tools, and returns their results in call order.
// Consecutive calls that cannot modify anything run in parallel; any other
// call is a barrier that runs alone. Every call gets a result, even when
// ctx is cancelled, so the transcript stays consistent: an unknown tool,
// arguments that fail the tool's schema and a call the Approver refused
// each become an IsError result; the rest go through Admit.
func (e *Engine) RunCalls(ctx context.Context, conv *Conversation, turn *Turn, round *Round, view *View) []*ToolResult {
	calls := round.Assistant.ToolCalls
	info := e.CallInfo(conv, turn, round, view)
	results := make([]*ToolResult, len(calls))
	info.round.expect(calls)
	for i := 0; i < len(calls); {
		j := i + 1
		if e.parallelSafe(calls[i]) {
			for j < len(calls) && e.parallelSafe(calls[j]) {
				j++
			}
		}
		if j-i == 1 {
			results[i] = e.call(ctx, info, calls[i])
		} else {
			var wg sync.WaitGroup
			for k := i; k < j; k++ {
				wg.Go(func() { results[k] = e.call(ctx, info, calls[k]) })
			}
			wg.Wait()
		}
		i = j
	}
	return results
}

// parallelSafe reports whether a call may overlap its neighbours: it goes to
// a read-only tool, or it will fail before running (unknown tool).
func (e *Engine) parallelSafe(c ToolCall) bool {
	t, ok := e.tools[c.Name]
	return !ok || t.spec.Risk.IsReadOnly()
}

// needsApproval reports whether a call to spec must be approved.
func needsApproval(spec ToolSpec) bool {
	return spec.Risk == 0 || spec.Risk.Has(Destructive) || spec.Risk.Has(Network)
}

// Call runs one call of a round the way RunCalls does, without the
// others: an unknown tool, arguments that fail the tool's schema and a
// call the Approver refused become IsError results; any other call goes
// through Admit with the engine's tool. info is what the guards see (see
// CallInfo). A driver that runs each call as its own step (a durable
// workflow's activity) uses Call, so it applies exactly the engine's rules.
func (e *Engine) Call(ctx context.Context, info CallInfo, call ToolCall) *ToolResult {
	return e.call(ctx, info, call)
}

// call dispatches one call to the engine's tool of that name.
func (e *Engine) call(ctx context.Context, info CallInfo, call ToolCall) *ToolResult {
	t, known := e.tools[call.Name]
	if !known {
		return e.refuse(ctx, info, call, ErrorResult("unknown tool %q. Call one of: %s.", call.Name, strings.Join(e.toolNames(), ", ")))
	}
	info.Spec = t.spec
	if err := t.validator.check(call.Args); err != nil {
		return e.refuse(ctx, info, call, ArgumentsError(info.View, t.spec, err))
	}
	if e.opts.Approver != nil && needsApproval(t.spec) {
		ok, err := e.opts.Approver(WithCallInfo(e.withObserver(ctx), info), call, t.spec)
		if err != nil {
			return e.refuse(ctx, info, call, ErrorResult("%s: could not ask for approval: %v", call.Name, err))
		}
		if !ok {
			return e.refuse(ctx, info, call, ErrorResult("%s: the user did not approve this call. Do not repeat it unchanged; choose another approach or ask the user.", call.Name))
		}
		// Tools that ask (workspace's ask mode) read this: a call nobody
		// approved is refused there, failing closed.
		info.Approved = true
	}
	return e.Admit(ctx, info, call, t.fn)
}

// refuse completes a call that never reached its tool.
func (e *Engine) refuse(ctx context.Context, info CallInfo, call ToolCall, res *ToolResult) *ToolResult {
	e.complete(WithCallInfo(e.withObserver(ctx), info), call, res, time.Now())
	return res
}

// Admit runs call through the engine's guards with fn as the tool, and
// returns the result as the transcript will store it: the full payload,
// the model copy the guards decided once, on arrival, and their cuts. It
// runs fn in its own goroutine under Options.ToolTimeout, recovers a
// panic, drains a stream no guard consumed (up to MaxStreamBytes), and
// turns an error into an IsError result the model can act on. info is
// what the guards see (see CallInfo); its Spec should be the tool's. A
// driver whose calls ran elsewhere admits their results with
// Returning(result) as fn.
func (e *Engine) Admit(ctx context.Context, info CallInfo, call ToolCall, fn ToolFunc) *ToolResult {
	start := time.Now()
	if info.Workspace == "" {
		info.Workspace = e.opts.Workspace
	}
	cctx := WithCallInfo(e.withObserver(ctx), info)
	res := e.invoke(cctx, Chain(fn, e.opts.Guards...), call)
	e.complete(cctx, call, res, start)
	return res
}

// complete stamps a result with its call and reports it.
func (e *Engine) complete(cctx context.Context, call ToolCall, res *ToolResult, start time.Time) {
	res.CallID, res.Tool = call.ID, call.Name
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	if info, ok := CallInfoFrom(cctx); ok {
		info.round.done(call.ID, res)
	}
	Emit(cctx, Event{Kind: EventToolResult, Call: &call, Result: &ResultInfo{
		Tool: call.Name, BytesIn: res.Bytes, BytesShown: shownBytes(res), IsError: res.IsError,
		TimedOut: res.TimedOut, Cuts: res.Cuts, Duration: time.Since(start),
	}})
}

func shownBytes(r *ToolResult) int {
	n := 0
	for _, p := range r.ModelParts() {
		n += p.Size()
	}
	return n
}

func (e *Engine) toolNames() []string {
	names := make([]string, 0, len(e.tools))
	for n := range e.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type callOutcome struct {
	res *ToolResult
	err error
}

// invoke runs the guarded tool in its own goroutine under the tool timeout.
// The agent waits for the tool or the deadline, whichever comes first: a
// tool that ignores its context cannot hold the loop past its timeout or a
// cancellation.
func (e *Engine) invoke(ctx context.Context, fn ToolFunc, call ToolCall) *ToolResult {
	tctx, cancel := context.WithTimeout(ctx, e.opts.ToolTimeout)
	defer cancel()
	done := make(chan callOutcome, 1)
	go func() {
		var out callOutcome
		defer func() {
			if p := recover(); p != nil {
				out = callOutcome{res: ErrorResult("%s: the tool crashed (panic: %v). This is a bug in the tool, not in your arguments; try another approach.", call.Name, p)}
				out.res.Meta = map[string]any{"panic_stack": string(debug.Stack())}
			}
			done <- out
		}()
		c := call
		res, err := fn(tctx, &c)
		if err == nil && res != nil && res.Stream != nil {
			drain(res, e.opts.MaxStreamBytes)
		}
		out = callOutcome{res: res, err: err}
	}()
	select {
	case out := <-done:
		switch {
		case out.err != nil && ctx.Err() != nil:
			return ErrorResult("%s: cancelled before the tool finished.", call.Name)
		case out.err != nil && tctx.Err() == context.DeadlineExceeded:
			return timeoutResult(call.Name, e.opts.ToolTimeout)
		case out.err != nil:
			return ErrorResult("%s: %v", call.Name, out.err)
		case out.res == nil:
			return &ToolResult{}
		}
		return out.res
	case <-tctx.Done():
		// Release whatever the abandoned call still returns.
		go func() {
			if out := <-done; out.res != nil && out.res.Stream != nil {
				_ = out.res.Stream.Close()
			}
		}()
		if ctx.Err() != nil {
			return ErrorResult("%s: cancelled before the tool finished.", call.Name)
		}
		return timeoutResult(call.Name, e.opts.ToolTimeout)
	}
}

func timeoutResult(name string, d time.Duration) *ToolResult {
	r := ErrorResult("%s: timed out after %s and was stopped. Try narrower arguments or a cheaper approach.", name, d)
	r.TimedOut = true
	return r
}

// drain reads a result's stream into a text part; it runs only when no
// guard consumed the stream. At most limit bytes are read (the agent's
// memory stays bounded even with no ceiling); the producer is then closed
// and the result says so. A read error keeps what was read and marks the
// result as an error, so the partial output reaches the transcript.
func drain(res *ToolResult, limit int64) {
	defer res.Stream.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(res.Stream, limit+1))
	res.Stream = nil
	cut := n > limit
	if cut {
		buf.Truncate(int(limit))
		buf.Truncate(wholeRunes(buf.Bytes()))
	}
	text := buf.String()
	switch {
	case err != nil:
		text += fmt.Sprintf("\n[harness: reading the tool's output failed after %d bytes: %v]", buf.Len(), err)
		res.IsError = true
	case cut:
		shown := buf.Len()
		text += fmt.Sprintf("\n[harness: the output was stopped after %d bytes (Options.MaxStreamBytes) and the rest was not read. "+
			"Narrow the command, or run with a result ceiling (guard.ResultPolicy), which spills long output to a file.]", shown)
		res.Cuts = append(res.Cuts, Cut{Kind: CutTruncated, By: "agent", BytesIn: shown, BytesOut: shown})
		if res.Meta == nil {
			res.Meta = map[string]any{}
		}
		res.Meta["stream_stopped_at"] = shown
	}
	if text != "" {
		res.Parts = append(res.Parts, TextPart(text))
	}
}

// wholeRunes returns the length of b without a UTF-8 sequence cut short at
// its end (bytes that are invalid anyway are left alone).
func wholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// ArgumentsError is the error result the engine gives a call of spec
// whose arguments fail its schema (err says how). When the request's view did not show the model the schema the
// engine checks, the result carries the full schema, so the model learns
// it from this one result: the view showed another schema for the tool (a
// selector's stub of a deferred tool, toolselect.Stub), or did not offer
// the tool at all (a selection that left it out; the model called it from
// memory of an earlier turn or by guess). With no view there is nothing to
// compare, and the error stays short. The replay prices a reveal round
// with it, so its bytes are the engine's.
func ArgumentsError(v *View, spec ToolSpec, err error) *ToolResult {
	if v != nil && len(spec.InputSchema) > 0 {
		if why := schemaHidden(v.Tools, spec); why != "" {
			return ErrorResult("%s: %v. %s", spec.Name, err, toolschema.Note(why, spec.InputSchema))
		}
	}
	return ErrorResult("%s: %v. Fix the arguments and call again.", spec.Name, err)
}

// schemaHidden says, in words for the model, why the offered tools do not
// show spec's input schema: the list shows another form of it, or does
// not offer it; "" when it shows it.
func schemaHidden(offered []ToolSpec, spec ToolSpec) string {
	for _, shown := range offered {
		if shown.Name == spec.Name {
			if bytes.Equal(shown.InputSchema, spec.InputSchema) {
				return ""
			}
			return toolschema.ShortForm
		}
	}
	return toolschema.NotOffered
}

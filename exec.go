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
)

// runCalls runs the round's calls and returns their results in call order.
// Consecutive calls that cannot modify anything run in parallel; any other
// call is a barrier that runs alone. Every call gets a result, even when ctx
// is cancelled, so the transcript stays consistent.
func (a *Agent) runCalls(ctx context.Context, conv *Conversation, turn *Turn, round *Round, view *View) []*ToolResult {
	calls := round.Assistant.ToolCalls
	view.indexWhole()
	// Guards read the transcript; a call abandoned at its timeout may go
	// on doing so while the loop appends the next rounds, so they get a
	// snapshot.
	snap := conv.snapshot(turn)
	results := make([]*ToolResult, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if a.parallelSafe(calls[i]) {
			for j < len(calls) && a.parallelSafe(calls[j]) {
				j++
			}
		}
		if j-i == 1 {
			results[i] = a.callOne(ctx, snap, turn, round, view, calls[i])
		} else {
			var wg sync.WaitGroup
			for k := i; k < j; k++ {
				wg.Go(func() { results[k] = a.callOne(ctx, snap, turn, round, view, calls[k]) })
			}
			wg.Wait()
		}
		i = j
	}
	return results
}

// parallelSafe reports whether a call may overlap its neighbours: it goes to
// a read-only tool, or it will fail before running (unknown tool).
func (a *Agent) parallelSafe(c ToolCall) bool {
	t, ok := a.tools[c.Name]
	return !ok || t.spec.Risk.IsReadOnly()
}

// needsApproval reports whether a call to spec must be approved.
func needsApproval(spec ToolSpec) bool {
	return spec.Risk == 0 || spec.Risk.Has(Destructive) || spec.Risk.Has(Network)
}

func (a *Agent) callOne(ctx context.Context, conv *Conversation, turn *Turn, round *Round, view *View, call ToolCall) *ToolResult {
	start := time.Now()
	info := CallInfo{Conversation: conv.ID, Turn: turn.Index, Round: round.Index, Workspace: a.opts.Workspace, Transcript: conv, View: view,
		Message: &round.Assistant}
	t, known := a.tools[call.Name]
	if known {
		info.Spec = t.spec
	}
	cctx := WithCallInfo(ctx, info)
	var res *ToolResult
	switch {
	case !known:
		res = ErrorResult("unknown tool %q. Call one of: %s.", call.Name, strings.Join(a.toolNames(), ", "))
	default:
		if err := t.validator.check(call.Args); err != nil {
			res = ErrorResult("%s: %v. Fix the arguments and call again.", call.Name, err)
			break
		}
		if a.opts.Approver != nil && needsApproval(t.spec) {
			ok, err := a.opts.Approver(cctx, call, t.spec)
			if err != nil {
				res = ErrorResult("%s: could not ask for approval: %v", call.Name, err)
				break
			}
			if !ok {
				res = ErrorResult("%s: the user did not approve this call. Do not repeat it unchanged; choose another approach or ask the user.", call.Name)
				break
			}
			info.Approved = true
			cctx = WithCallInfo(ctx, info)
		}
		res = a.invoke(cctx, t, call)
	}
	res.CallID, res.Tool = call.ID, call.Name
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	Emit(cctx, Event{Kind: EventToolResult, Call: &call, Result: &ResultInfo{
		Tool: call.Name, BytesIn: res.Bytes, BytesShown: shownBytes(res), IsError: res.IsError,
		TimedOut: res.TimedOut, Cuts: res.Cuts, Duration: time.Since(start),
	}})
	return res
}

func shownBytes(r *ToolResult) int {
	n := 0
	for _, p := range r.ModelParts() {
		n += p.Size()
	}
	return n
}

func (a *Agent) toolNames() []string {
	names := make([]string, 0, len(a.tools))
	for n := range a.tools {
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
func (a *Agent) invoke(ctx context.Context, t *boundTool, call ToolCall) *ToolResult {
	tctx, cancel := context.WithTimeout(ctx, a.opts.ToolTimeout)
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
		res, err := t.fn(tctx, &c)
		if err == nil && res != nil && res.Stream != nil {
			drain(res, a.opts.MaxStreamBytes)
		}
		out = callOutcome{res: res, err: err}
	}()
	select {
	case out := <-done:
		switch {
		case out.err != nil && ctx.Err() != nil:
			return ErrorResult("%s: cancelled before the tool finished.", call.Name)
		case out.err != nil && tctx.Err() == context.DeadlineExceeded:
			return timeoutResult(call.Name, a.opts.ToolTimeout)
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
		return timeoutResult(call.Name, a.opts.ToolTimeout)
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

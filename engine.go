package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Engine runs the rounds of a conversation. It holds what Options
// configure — tools, per-call guards, view policies, the recorder — and
// exposes a turn as separate steps, so that every driver runs the same
// rules: the [Agent], which owns the model and loops over the steps; the
// replay, whose model answers with recorded messages and whose tools
// return recorded results; and drivers that own the model call themselves,
// such as a proxy that receives the whole history with each request, or a
// durable workflow whose model call and tool calls are separate activities
// and whose conversation is reloaded from the store between them.
//
// One turn, step by step (Agent.Run is this loop):
//
//	turn, err := eng.BeginTurn(ctx, conv, input)
//	tools := eng.SelectTools(ctx, conv, turn, eng.Tools())
//	for final := false; ; {
//		view, req, err := eng.Request(ctx, conv, turn, tools, final, false)
//		resp, err := model.Generate(ctx, req)      // the driver's model call
//		round := eng.Round(ctx, conv, turn, view, resp)
//		round.Results = eng.RunCalls(ctx, conv, turn, round, view) // or Admit, call by call
//		err = eng.AppendRound(ctx, conv, turn, round)
//		if len(round.Assistant.ToolCalls) == 0 { break }
//		final = view.Stop != "" || toolRounds >= eng.MaxRounds()
//	}
//	res, err := eng.EndTurn(ctx, conv, turn, outcome, policyUsage, "")
//
// Each step is deterministic given the transcript and the options, so a
// driver that rebuilds conv from a store between steps gets the same
// requests. An Engine is safe for concurrent use on different
// conversations.
type Engine struct {
	opts  Options
	tools map[string]*boundTool
	specs []ToolSpec
	// chars keeps, per conversation, the characters of the last requests'
	// tool messages (see charsMemo), so a request's figures cost little
	// for what the one before showed.
	charsMu sync.Mutex
	chars   map[*Conversation]*charsMemo
}

// charsMemoConversations bounds the conversations an Engine's chars keeps.
const charsMemoConversations = 256

// charsOf returns conv's chars memo.
func (e *Engine) charsOf(conv *Conversation) *charsMemo {
	e.charsMu.Lock()
	defer e.charsMu.Unlock()
	cm := e.chars[conv]
	if cm == nil {
		if e.chars == nil || len(e.chars) >= charsMemoConversations {
			e.chars = map[*Conversation]*charsMemo{}
		}
		cm = &charsMemo{}
		e.chars[conv] = cm
	}
	return cm
}

type boundTool struct {
	spec      ToolSpec
	fn        ToolFunc // unguarded: Admit applies the guards
	validator *argsValidator
}

// NewEngine returns an engine for opts (nil means defaults). It fails when
// two tools share a name, a tool has no name or function, or a tool's input
// schema does not compile.
func NewEngine(opts *Options) (*Engine, error) {
	e := &Engine{tools: map[string]*boundTool{}}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.MaxRounds <= 0 {
		e.opts.MaxRounds = DefaultMaxRounds
	}
	if e.opts.ToolTimeout <= 0 {
		e.opts.ToolTimeout = DefaultToolTimeout
	}
	if e.opts.MaxStreamBytes <= 0 {
		e.opts.MaxStreamBytes = defaultMaxStreamBytes
	}
	for _, t := range e.opts.Tools {
		name := t.Spec.Name
		if name == "" {
			return nil, errors.New("harness: a tool has no name")
		}
		if t.Func == nil {
			return nil, fmt.Errorf("harness: tool %q has no function", name)
		}
		if _, dup := e.tools[name]; dup {
			return nil, fmt.Errorf("harness: two tools are named %q", name)
		}
		v, err := compileSchema(name, t.Spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		e.tools[name] = &boundTool{spec: t.Spec, fn: t.Func, validator: v}
		e.specs = append(e.specs, t.Spec)
	}
	return e, nil
}

// Tools returns the specs of the engine's tools in the order given.
func (e *Engine) Tools() []ToolSpec { return append([]ToolSpec(nil), e.specs...) }

// MaxRounds is the number of tool rounds a turn may run before its
// synthesis call (Options.MaxRounds with its default applied).
func (e *Engine) MaxRounds() int { return e.opts.MaxRounds }

// emit reports ev, located in conv and turn, to Options.Observer (or to
// the hold of HoldEvents in ctx).
func (e *Engine) emit(ctx context.Context, conv *Conversation, turn *Turn, ev Event) {
	if conv != nil {
		ev.Conversation = conv.ID
	}
	if turn != nil {
		ev.Turn = turn.Index
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if obs := e.observer(ctx); obs != nil {
		obs(ev)
	}
}

// withObserver returns ctx carrying the engine's observer (or the hold of
// HoldEvents in ctx), so that guards, policies and tools reach it through
// Emit.
func (e *Engine) withObserver(ctx context.Context) context.Context {
	obs := e.observer(ctx)
	if obs == nil {
		return ctx
	}
	return WithObserver(ctx, obs)
}

// withObserverOf is withObserver for the steps of turn of conv: an event
// reported through Emit without a conversation or turn gets conv's and
// turn's. Emit fills them only from a tool call's CallInfo, and a view
// policy (compaction, stuck detection), the tool selector or a provider's
// retry warning runs outside any call: without them the store files the
// event under no conversation, where Store.Events for it never finds it.
func (e *Engine) withObserverOf(ctx context.Context, conv *Conversation, turn *Turn) context.Context {
	obs := e.observer(ctx)
	if obs == nil {
		return ctx
	}
	id, idx := "", 0
	if conv != nil {
		id = conv.ID
	}
	if turn != nil {
		idx = turn.Index
	}
	return WithObserver(ctx, func(ev Event) {
		if ev.Conversation == "" {
			ev.Conversation = id
		}
		if ev.Turn == 0 {
			ev.Turn = idx
		}
		obs(ev)
	})
}

// ModelContext returns ctx for a model call a driver makes itself for
// turn of conv (a durable workflow's model step, which calls the model
// outside Agent.Run): it carries the engine's observer, or its hold (see
// HoldEvents), so a provider's events reported through Emit (its retry
// warnings) reach the observer as the agent's model calls report them,
// named with the conversation and turn.
func (e *Engine) ModelContext(ctx context.Context, conv *Conversation, turn *Turn) context.Context {
	return e.withObserverOf(ctx, conv, turn)
}

// BeginTurn appends a turn with input to conv, records it and reports
// EventTurnStart. On a recorder error the turn stays appended (EndTurn
// closes it) and the error is returned.
func (e *Engine) BeginTurn(ctx context.Context, conv *Conversation, input string) (*Turn, error) {
	if conv == nil {
		return nil, errors.New("harness: a turn needs a conversation")
	}
	turn := &Turn{Index: len(conv.Turns) + 1, Input: input, Started: e.now()}
	conv.Turns = append(conv.Turns, turn)
	if e.opts.Recorder != nil {
		if err := e.opts.Recorder.BeginTurn(ctx, conv, turn); err != nil {
			return turn, fmt.Errorf("harness: recording turn %d: %w", turn.Index, err)
		}
	}
	e.emit(ctx, conv, turn, Event{Kind: EventTurnStart, Detail: input})
	return turn, nil
}

// SelectTools returns the tools the turn offers out of offered (the
// engine's Tools, or the tools a proxy's client sent): the Selector's
// choice for the turn's input, or every offered tool when there is no
// selector, it fails (reported as an EventWarning) or it returns nil. The
// choice is made once per turn so that every request of the turn shares
// its prefix.
func (e *Engine) SelectTools(ctx context.Context, conv *Conversation, turn *Turn, offered []ToolSpec) []ToolSpec {
	tools := offered
	if e.opts.Selector == nil || len(tools) == 0 {
		return tools
	}
	sel, err := e.opts.Selector.Select(e.withObserverOf(ctx, conv, turn), conv, turn.Input, tools)
	switch {
	case err != nil:
		e.emit(ctx, conv, turn, Event{Kind: EventWarning, Policy: "selector", Detail: "tool selection failed, offering every tool: " + err.Error()})
	case sel != nil:
		tools = sel
	}
	return tools
}

// View builds the view of the next request of turn: BuildView of the
// transcript with the engine's system prompt, then every view policy in
// order. overflow says the previous attempt at this request was rejected as
// too large (ErrContextTooLarge). Notes the policies add are recorded
// before View returns. View reports nothing and records no request; see
// Request.
func (e *Engine) View(ctx context.Context, conv *Conversation, turn *Turn, tools []ToolSpec, final, overflow bool) (*View, error) {
	v := BuildView(conv, turn, e.opts.System, tools, final)
	v.Overflow, v.KeepToolsOnFinal, v.Idle = overflow, e.opts.KeepToolsOnFinal, e.idle(conv, turn)
	pctx := e.withObserverOf(ctx, conv, turn)
	for _, p := range e.opts.Policies {
		if err := p.ApplyView(pctx, v); err != nil {
			return nil, fmt.Errorf("harness: view policy: %w", err)
		}
	}
	if err := e.recordNotes(ctx, conv, v); err != nil {
		return nil, err
	}
	return v, nil
}

// now reads the engine's clock.
func (e *Engine) now() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now()
	}
	return time.Now()
}

// idle is View.Idle for a view of turn: the time since the
// conversation's last response: when this process
// turned it into a round, or, for a conversation loaded from a store,
// which this process has not answered, the newest stored round's Answered.
// A newest round stored without one (before rounds recorded it) leaves
// the old rule: a turn's first request counts from the end of the turn
// before (its last response came just before), and a later one is
// unknown (0).
func (e *Engine) idle(conv *Conversation, turn *Turn) time.Duration {
	since := conv.answered
	if since.IsZero() {
		if r := conv.lastRound(); r != nil {
			since = r.Answered
		}
	}
	if since.IsZero() && turn != nil && len(turn.Rounds) == 0 {
		for _, t := range conv.Turns {
			if t != nil && t != turn && t.Ended.After(since) {
				since = t.Ended
			}
		}
	}
	if since.IsZero() {
		return 0
	}
	return max(e.now().Sub(since), 0)
}

// recordNotes persists the notes the policies added to v.
func (e *Engine) recordNotes(ctx context.Context, conv *Conversation, v *View) error {
	nr, ok := e.opts.Recorder.(noteRecorder)
	for _, n := range v.notes {
		if !ok {
			break
		}
		if err := nr.AddNote(ctx, conv, n); err != nil {
			return fmt.Errorf("harness: recording a note: %w", err)
		}
	}
	v.notes = nil
	return nil
}

// Request builds the next request of turn and reports it: the view (see
// View), then, when a policy stops the tool rounds of a non-final view
// (View.Stop, the stuck verdict), the same view rebuilt as final with Stop
// and StopReason kept, so the model answers with tools withheld. It
// reports EventRequest, and the stop as an EventPolicy, and hands the
// request to the recorder (its AddRequest, if any). The returned view's Spent sums what the
// policies of every view built spent.
func (e *Engine) Request(ctx context.Context, conv *Conversation, turn *Turn, tools []ToolSpec, final, overflow bool) (*View, *Request, error) {
	v, err := e.View(ctx, conv, turn, tools, final, overflow)
	if err != nil {
		return nil, nil, err
	}
	if !final && v.Stop != "" {
		stop, reason, spent := v.Stop, v.StopReason, v.Spent
		e.emit(ctx, conv, turn, Event{Kind: EventPolicy, Policy: "stop", Detail: fmt.Sprintf("tool rounds stopped (%s): %s", stop, reason)})
		if v, err = e.View(ctx, conv, turn, tools, true, overflow); err != nil {
			return nil, nil, err
		}
		v.Stop, v.StopReason, v.Spent = stop, reason, spent.Add(v.Spent)
	}
	stats := v.stats(e.charsOf(conv))
	sent := stats
	v.sent = &sent
	e.emit(ctx, conv, turn, Event{Kind: EventRequest, Round: v.Round, Stats: &stats})
	req := v.Request(e.opts.MaxOutputTokens)
	if rr, ok := e.opts.Recorder.(requestRecorder); ok {
		if err := rr.AddRequest(ctx, conv, turn, req); err != nil {
			return nil, nil, fmt.Errorf("harness: recording the request of turn %d round %d: %w", turn.Index, v.Round, err)
		}
	}
	return v, req, nil
}

// Round turns the model's reply to the request built from view into the
// turn's next round, not yet appended: the assistant message (role set, its
// calls copied, every call id made unique in conv), its usage and the
// request's figures. On a final view the calls the model still made are
// moved to Round.Dropped and reported, since tools were withheld.
func (e *Engine) Round(ctx context.Context, conv *Conversation, turn *Turn, view *View, resp *Response) *Round {
	usage := resp.Usage
	e.emit(ctx, conv, turn, Event{Kind: EventResponse, Round: view.Round, Usage: &usage})
	conv.answered = e.now()
	round := &Round{Index: view.Round, Assistant: resp.Message, Usage: resp.Usage, Final: view.Final, Stats: view.requestStats(),
		Answered: conv.answered}
	round.Assistant.Role = RoleAssistant
	// The transcript owns its calls: the model's slice may be shared.
	round.Assistant.ToolCalls = append([]ToolCall(nil), round.Assistant.ToolCalls...)
	if view.Final && len(round.Assistant.ToolCalls) > 0 {
		round.Dropped = round.Assistant.ToolCalls
		round.Assistant.ToolCalls = nil
		e.emit(ctx, conv, turn, Event{Kind: EventWarning, Round: round.Index, Detail: fmt.Sprintf("the model asked for %d tool call(s) while tools were withheld; they were not run", len(round.Dropped))})
	}
	if !idsUnique(conv, round) {
		fixCallIDs(turn.Index, round, callIDs(conv))
	}
	return round
}

// AppendRound appends a complete round (its calls answered) to turn and
// records it. The recording is attempted even when ctx is done, so the
// store holds every round the transcript does.
func (e *Engine) AppendRound(ctx context.Context, conv *Conversation, turn *Turn, round *Round) error {
	turn.Rounds = append(turn.Rounds, round)
	if e.opts.Recorder != nil {
		if err := e.opts.Recorder.AddRound(context.WithoutCancel(ctx), conv, turn, round); err != nil {
			return fmt.Errorf("harness: recording turn %d round %d: %w", turn.Index, round.Index, err)
		}
	}
	return nil
}

// EndTurn closes turn with outcome and returns its figures as Agent.Run
// does: requests, tool rounds, evidence and tool schemas tallied from the
// turn's rounds, and as usage the rounds' usage plus policyUsage, what the
// policies' own model calls spent (the Spent of the views built). It sets
// the turn's outcome, end time and usage, reports EventTurnEnd with the
// figures and records the end, even when ctx is done, so the store never
// holds a turn without an outcome. detail is the error that ended the
// turn, or "". The Result is never nil; the error is the recorder's.
func (e *Engine) EndTurn(ctx context.Context, conv *Conversation, turn *Turn, outcome Outcome, policyUsage Usage, detail string) (*Result, error) {
	res := tally(turn, policyUsage)
	res.Outcome = outcome
	turn.Outcome, turn.Ended, turn.Usage = outcome, e.now(), res.Usage
	u := res.Usage
	e.emit(ctx, conv, turn, Event{Kind: EventTurnEnd, Outcome: outcome, Usage: &u, Detail: detail, Data: res.endData()})
	if e.opts.Recorder != nil {
		if err := e.opts.Recorder.EndTurn(context.WithoutCancel(ctx), conv, turn); err != nil {
			return res, fmt.Errorf("harness: recording the end of turn %d: %w", turn.Index, err)
		}
	}
	return res, nil
}

// CallInfo is what the guards of a call of round see: the conversation as
// the round's calls began (a snapshot, so a guard still running after its
// call timed out never races later appends), the view the model answered,
// the assistant message that made the call and the engine's workspace;
// the results of the round's calls admitted with it are collected for
// [CallInfo.RoundResults]. Spec is left for the caller (Admit sets it from
// the tool when empty).
func (e *Engine) CallInfo(conv *Conversation, turn *Turn, round *Round, view *View) CallInfo {
	if view != nil {
		view.indexWhole()
	}
	return CallInfo{Conversation: conv.ID, Turn: turn.Index, Round: round.Index, Workspace: e.opts.Workspace,
		Transcript: conv.snapshot(turn), View: view, Message: &round.Assistant, round: newRoundResults()}
}

// Returning is a ToolFunc that returns a copy of res: the tool of a call
// that has already run (a recorded result, or one a proxy's client sent),
// so that Admit decides its model copy through the guards as if it had
// just arrived. The copy has res's payload and none of its model copy or
// cuts.
func Returning(res *ToolResult) ToolFunc {
	return func(context.Context, *ToolCall) (*ToolResult, error) {
		out := &ToolResult{CallID: res.CallID, Tool: res.Tool, IsError: res.IsError,
			Parts: append([]Part(nil), res.Parts...), Structured: res.Structured}
		out.Bytes = out.PayloadSize()
		return out, nil
	}
}

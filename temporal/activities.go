package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// errTypeRefused marks an activity error that no retry can fix (the
// conversation is not in the state the step needs).
const errTypeRefused = "harness.Refused"

// Activities are the steps of a turn, run by a worker. Every step rebuilds
// the conversation from Store, so any worker can run any step of any
// turn; Journal keeps each step's output until its round is stored.
type Activities struct {
	// Engine holds the tools, per-call guards and view policies (the
	// default stack, for what harness-temporal worker runs: see
	// stack.New). Its Options.Recorder must be Store (or record into it),
	// and its Options.Workspace, where spill files go, the workspace every
	// worker's tools act on. Its Options.Observer (Store.Observe, for
	// harness-temporal worker) receives the events of a model or tool step,
	// and those of the turn's tool selection, once the step's output is
	// journalled, those of a failed attempt never (see ModelCall,
	// BeginTurn); a store keeps one turn_end of a retried EndTurn (see
	// EndTurn).
	Engine *harness.Engine
	// Store is the transcript store shared by every worker.
	Store store.Store
	// Model answers the requests.
	Model harness.Model
	// Journal keeps the steps' outputs (see Journal).
	Journal Journal
}

// Register registers the workflow and the activities on w.
func (a *Activities) Register(w worker.Registry) {
	w.RegisterWorkflowWithOptions(TurnWorkflow, workflowOptions())
	for name, fn := range map[string]any{
		ActivityBeginTurn: a.BeginTurn, ActivityModel: a.ModelCall, ActivityTool: a.ToolCall,
		ActivityAppend: a.AppendRound, ActivityEndTurn: a.EndTurn,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// refused is an error no retry can fix.
func refused(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), errTypeRefused, nil)
}

// BeginTurn appends the turn to the stored conversation (creating it) and
// chooses the turn's tools. The turn's index is journalled under the
// workflow run before the store is written, so a retry after a crash
// finds the turn it began instead of beginning a second one; the choice
// is journalled too (see selectTools), so a retry offers the tools of the
// attempt whose selector events were stored, and stores them once.
func (a *Activities) BeginTurn(ctx context.Context, in TurnInput) (beginOutput, error) {
	defer heartbeat(ctx)()
	run := activity.GetInfo(ctx).WorkflowExecution.RunID
	conv, err := a.Store.Load(ctx, in.Conversation)
	switch {
	case errors.Is(err, store.ErrNotFound):
		conv = harness.NewConversation(in.Conversation)
	case err != nil:
		return beginOutput{}, err
	}
	k := Key{Conversation: in.Conversation, Name: "begin:" + run}
	v, err := a.Journal.Put(ctx, k, []byte(strconv.Itoa(len(conv.Turns)+1)))
	if err != nil {
		return beginOutput{}, err
	}
	idx, err := strconv.Atoi(string(v))
	if err != nil {
		return beginOutput{}, refused("journal entry %s is not a turn index: %q", k, v)
	}
	var turn *harness.Turn
	switch {
	case idx == len(conv.Turns)+1:
		if turn, err = a.Engine.BeginTurn(ctx, conv, in.Input); err != nil {
			return beginOutput{}, err
		}
	case idx <= len(conv.Turns) && conv.Turns[idx-1].Input == in.Input:
		turn = conv.Turns[idx-1] // begun by an earlier attempt
	default:
		return beginOutput{}, refused("conversation %s has %d turn(s); turn %d of this run cannot begin (another turn ran meanwhile)", in.Conversation, len(conv.Turns), idx)
	}
	// The turn is the workflow's: its next step may run on any worker.
	if err := a.suspend(ctx, conv, turn); err != nil {
		return beginOutput{}, err
	}
	names, err := a.selectTools(ctx, conv, turn, run)
	if err != nil {
		return beginOutput{}, err
	}
	return beginOutput{Turn: turn.Index, Tools: names, MaxRounds: a.Engine.MaxRounds()}, nil
}

// selection is the journal entry of a turn's tools: their names, and the
// attempt that chose them, so that an attempt tells its own entry from an
// earlier one's that chose the same tools (a selector's usual case) and
// releases its events only for its own.
type selection struct {
	Tools   []string `json:"tools"`
	Attempt int32    `json:"attempt"`
}

// selectTools returns the names of turn's tools: those journalled under
// the workflow run, else the engine's choice (Engine.SelectTools),
// journalled. The selector's events (its own and the engine's warning
// when it fails) reach the engine's observer only when the journal keeps
// this attempt's choice (see Engine.HoldEvents): an attempt whose Put
// failed, or lost to another attempt's entry, drops them, and a retry
// after the choice is journalled neither selects again nor reports.
func (a *Activities) selectTools(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, run string) ([]string, error) {
	k := Key{Conversation: conv.ID, Turn: turn.Index, Name: "tools:" + run}
	kept, ok, err := a.Journal.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	if !ok {
		held, release := a.Engine.HoldEvents(ctx)
		specs := a.Engine.SelectTools(held, conv, turn, a.Engine.Tools())
		mine := selection{Tools: make([]string, len(specs)), Attempt: activity.GetInfo(ctx).Attempt}
		for i, s := range specs {
			mine.Tools[i] = s.Name
		}
		b, err := json.Marshal(mine)
		if err != nil {
			return nil, refused("encoding the tools of turn %d: %v", turn.Index, err)
		}
		if kept, err = a.Journal.Put(ctx, k, b); err != nil {
			return nil, err
		}
		if bytes.Equal(kept, b) {
			release() // else another attempt's choice won, with its events
		}
	}
	var sel selection
	if err := json.Unmarshal(kept, &sel); err != nil {
		return nil, refused("journal entry %s is not a tool selection: %v", k, err)
	}
	return sel.Tools, nil
}

// pending is the journal entry of a round whose calls are not all
// answered: the round as Engine.Round made it, and the request's system
// prompt, which the store records with the round.
type pending struct {
	Round  *harness.Round  `json:"round"`
	System string          `json:"system,omitempty"`
	Stop   harness.Outcome `json:"stop,omitempty"`
	Spent  harness.Usage   `json:"spent"`
}

func (p *pending) output() modelOutput {
	out := modelOutput{Round: p.Round.Index, Final: p.Round.Final, Stop: p.Stop, Spent: p.Spent}
	for _, c := range p.Round.Assistant.ToolCalls {
		out.Calls = append(out.Calls, callRef{ID: c.ID, Name: c.Name})
	}
	return out
}

// ModelCall builds the round's request from the stored conversation,
// calls the model and journals the round it answered (call ids fixed). A
// retry whose round is journalled returns it without calling the model.
// The events of the attempt (the views' policies', the request's, the
// response's) reach the engine's observer only once its round is the one
// journalled (see Engine.HoldEvents): an attempt that fails, whose model
// call a retry makes again, is not logged twice. A request re-sent within
// the attempt (ErrContextTooLarge) is a second request and keeps its events.
func (a *Activities) ModelCall(ctx context.Context, ref stepRef) (modelOutput, error) {
	defer heartbeat(ctx)()
	k := Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "model"}
	if p, ok, err := a.pending(ctx, k); err != nil || ok {
		return p.output(), err
	}
	ctx, release := a.Engine.HoldEvents(ctx)
	conv, turn, err := a.load(ctx, ref)
	if err != nil {
		return modelOutput{}, err
	}
	if n := len(turn.Rounds); n != ref.Round-1 {
		return modelOutput{}, refused("turn %d of %s has %d stored round(s) and no journalled round %d", ref.Turn, ref.Conversation, n, ref.Round)
	}
	tools := a.specs(ref.Tools)
	var spent harness.Usage
	for attempt := 0; ; attempt++ {
		view, req, err := a.Engine.Request(ctx, conv, turn, tools, ref.Final, attempt > 0)
		if err != nil {
			return modelOutput{}, err
		}
		spent = spent.Add(view.Spent)
		resp, err := a.Model.Generate(a.Engine.ModelContext(ctx, conv, turn), req)
		if err == nil && resp == nil {
			err = errors.New("the model returned no response")
		}
		if err != nil {
			if attempt == 0 && errors.Is(err, harness.ErrContextTooLarge) {
				continue
			}
			return modelOutput{}, fmt.Errorf("harness: turn %d round %d: model: %w", ref.Turn, ref.Round, err)
		}
		round := a.Engine.Round(ctx, conv, turn, view, resp)
		p := &pending{Round: round, System: req.System, Stop: view.Stop, Spent: spent}
		b, err := json.Marshal(p)
		if err != nil {
			return modelOutput{}, refused("encoding round %d: %v", ref.Round, err)
		}
		kept, err := a.Journal.Put(ctx, k, b)
		if err != nil {
			return modelOutput{}, err
		}
		if bytes.Equal(kept, b) {
			release() // else another attempt's round won, with its events
		}
		var stored pending
		if err := json.Unmarshal(kept, &stored); err != nil {
			return modelOutput{}, refused("journal entry %s: %v", k, err)
		}
		return stored.output(), nil
	}
}

// ToolCall runs one call of a journalled round through the engine (its
// guards, its checks, its approver) and journals the result. Its guards
// see the journalled results of the round's earlier calls
// (CallInfo.RoundResults), as under Engine.RunCalls. A retry whose result
// is journalled returns its figures without running the tool again: each
// call runs once, by its call id. The events of the call (its guards',
// EventToolResult) reach the engine's observer only once its result is
// the one journalled (see Engine.HoldEvents), so a failed attempt's are
// dropped; those of the view rebuilt for the guards never do, since
// ModelCall reported that request's.
func (a *Activities) ToolCall(ctx context.Context, ref stepRef) (toolOutput, error) {
	rk := Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "call:" + ref.CallID}
	if res, ok, err := a.result(ctx, rk); err != nil || ok {
		return figures(res, true), err
	}
	p, ok, err := a.pending(ctx, Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "model"})
	if err != nil {
		return toolOutput{}, err
	}
	if !ok {
		return toolOutput{}, refused("round %d of turn %d of %s is not journalled", ref.Round, ref.Turn, ref.Conversation)
	}
	var call *harness.ToolCall
	for i := range p.Round.Assistant.ToolCalls {
		if p.Round.Assistant.ToolCalls[i].ID == ref.CallID {
			call = &p.Round.Assistant.ToolCalls[i]
		}
	}
	if call == nil {
		return toolOutput{}, refused("round %d of turn %d of %s has no call %q", ref.Round, ref.Turn, ref.Conversation, ref.CallID)
	}
	conv, turn, err := a.load(ctx, ref)
	if err != nil {
		return toolOutput{}, err
	}
	rebuilt, _ := a.Engine.HoldEvents(ctx) // never released: ModelCall reported this view
	view, err := a.Engine.View(rebuilt, conv, turn, a.specs(ref.Tools), p.Round.Final, false)
	if err != nil {
		return toolOutput{}, err
	}
	earlier, err := a.earlierResults(ctx, ref, p.Round)
	if err != nil {
		return toolOutput{}, err
	}
	info := a.Engine.CallInfo(conv, turn, p.Round, view).WithRoundResults(earlier...)
	held, release := a.Engine.HoldEvents(ctx)
	stop := heartbeat(ctx)
	res := a.Engine.Call(held, info, *call)
	stop()
	b, err := json.Marshal(res)
	if err != nil {
		return toolOutput{}, refused("encoding the result of %s: %v", ref.CallID, err)
	}
	kept, err := a.Journal.Put(context.WithoutCancel(ctx), rk, b)
	if err != nil {
		return toolOutput{}, err
	}
	if bytes.Equal(kept, b) {
		release() // else another attempt's result won, with its events
	}
	stored, err := decodeResult(rk, kept)
	return figures(stored, false), err
}

// earlierResults reads the journalled results of the calls of round made
// before ref.CallID (Message.ToolCalls order), so that the call's guards
// compare it with them as in Engine.RunCalls (Collapse, the ceiling's
// repeat suppression): the workflow runs a round's calls one after
// another, so each earlier call's result is journalled before this one
// starts. One missing is left out (its guards then see it as RoundResults
// does a call that never ran).
func (a *Activities) earlierResults(ctx context.Context, ref stepRef, round *harness.Round) ([]*harness.ToolResult, error) {
	var out []*harness.ToolResult
	for _, c := range round.Assistant.ToolCalls {
		if c.ID == ref.CallID {
			break
		}
		res, ok, err := a.result(ctx, Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "call:" + c.ID})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, res)
		}
	}
	return out, nil
}

// AppendRound stores a journalled round with every result, in one store
// transaction (Recorder.AddRound), as the turn's writer (see resume). A
// round already stored is left alone, so a retry after a crash that
// followed the commit appends nothing.
func (a *Activities) AppendRound(ctx context.Context, ref stepRef) error {
	defer heartbeat(ctx)()
	conv, turn, err := a.load(ctx, ref)
	if err != nil {
		return err
	}
	if len(turn.Rounds) >= ref.Round {
		return a.suspend(ctx, conv, turn) // an earlier attempt stored it
	}
	if err := a.resume(ctx, conv, turn); err != nil {
		return err
	}
	return errors.Join(a.appendRound(ctx, ref, conv, turn), a.suspend(ctx, conv, turn))
}

// appendRound is AppendRound once the turn is this worker's.
func (a *Activities) appendRound(ctx context.Context, ref stepRef, conv *harness.Conversation, turn *harness.Turn) error {
	p, ok, err := a.pending(ctx, Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "model"})
	if err != nil {
		return err
	}
	if !ok {
		return refused("round %d of turn %d of %s is not journalled", ref.Round, ref.Turn, ref.Conversation)
	}
	round := p.Round
	for _, c := range round.Assistant.ToolCalls {
		res, ok, err := a.result(ctx, Key{Conversation: ref.Conversation, Turn: ref.Turn, Round: ref.Round, Name: "call:" + c.ID})
		if err != nil {
			return err
		}
		if !ok {
			return refused("call %s of round %d of turn %d of %s has no journalled result", c.ID, ref.Round, ref.Turn, ref.Conversation)
		}
		round.Results = append(round.Results, res)
	}
	var tools []harness.ToolSpec
	if !round.Final {
		tools = a.specs(ref.Tools)
	}
	req := &harness.Request{System: p.System, Tools: tools, Final: round.Final, Turn: ref.Turn, Round: ref.Round}
	if err := a.Store.AddRequest(ctx, conv, turn, req); err != nil {
		return err
	}
	return a.Engine.AppendRound(ctx, conv, turn, round)
}

// EndTurn records the turn's outcome and usage (its rounds' plus what the
// policies spent), with the figures Agent.Run reports at a turn's end
// (Engine.EndTurn tallies them), and clears the turn's journal. A turn already ended is
// left alone; one that a takeover marked store.Interrupted (its worker
// died) is resumed and ended. An attempt whose store write failed has
// reported turn_end, and the store keeps that copy waiting for its next
// write; the retry reports it again and the store drops the later copy
// (see store.Store.Observe), so the turn's end and one turn_end are
// committed together, as in process. The event is not held here: held
// until the write succeeds, it would be committed after the end, in a
// transaction of its own, and lost when the worker died in between.
func (a *Activities) EndTurn(ctx context.Context, in endInput) (endOutput, error) {
	defer heartbeat(ctx)()
	conv, turn, err := a.load(ctx, stepRef{Conversation: in.Conversation, Turn: in.Turn})
	if err != nil {
		return endOutput{}, err
	}
	if turn.Outcome == "" || turn.Outcome == store.Interrupted {
		if err := a.resume(ctx, conv, turn); err != nil {
			return endOutput{}, err
		}
		if _, err := a.Engine.EndTurn(ctx, conv, turn, in.Outcome, in.PolicyUsage, in.Detail); err != nil {
			return endOutput{}, errors.Join(err, a.suspend(ctx, conv, turn))
		}
	}
	if err := a.Journal.DeleteTurn(ctx, in.Conversation, in.Turn); err != nil {
		return endOutput{}, err
	}
	out := endOutput{Answer: turn.Answer()}
	if len(out.Answer) > MaxAnswerBytes {
		cut := MaxAnswerBytes
		for cut > 0 && !utf8.RuneStart(out.Answer[cut]) {
			cut--
		}
		out.Answer, out.AnswerCut = out.Answer[:cut], true
	}
	return out, nil
}

// resume makes this worker's Store the writer of turn before a step writes
// it. A durable turn is owned by its workflow, not by the worker that
// began it: each writing step resumes the turn (store.TurnResumer) and
// suspends it when done (see suspend), so its next step may run on any
// worker; a step retried after a worker died mid-write takes the dead
// worker's claim over and reopens the turn if the takeover marked it
// Interrupted, rather than recording into a turn the store ended. While
// another worker's attempt is still writing, the store refuses with
// store.ErrConversationBusy and the step is retried. A turn that ended or
// that a later turn follows fails the step for good. A store without
// TurnResumer is written as it is.
func (a *Activities) resume(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	r, ok := a.Store.(store.TurnResumer)
	if !ok {
		return nil
	}
	err := r.ResumeTurn(ctx, conv, turn)
	if errors.Is(err, store.ErrTurnEnded) {
		return refused("resuming turn %d of %s: %v", turn.Index, conv.ID, err)
	}
	return err
}

// suspend gives up this worker's claim on turn when it is done writing,
// leaving the turn open (store.TurnResumer), so that the turn's next step
// runs on whichever worker takes it, dead or alive: no step waits for the
// worker that ran the last one.
func (a *Activities) suspend(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	r, ok := a.Store.(store.TurnResumer)
	if !ok {
		return nil
	}
	return r.SuspendTurn(context.WithoutCancel(ctx), conv, turn)
}

// load returns the stored conversation and its turn ref.Turn.
func (a *Activities) load(ctx context.Context, ref stepRef) (*harness.Conversation, *harness.Turn, error) {
	conv, err := a.Store.Load(ctx, ref.Conversation)
	if err != nil {
		return nil, nil, err
	}
	if ref.Turn < 1 || ref.Turn > len(conv.Turns) {
		return nil, nil, refused("conversation %s has %d turn(s), not turn %d", ref.Conversation, len(conv.Turns), ref.Turn)
	}
	return conv, conv.Turns[ref.Turn-1], nil
}

// specs returns the engine's specs of the named tools, in that order.
func (a *Activities) specs(names []string) []harness.ToolSpec {
	by := map[string]harness.ToolSpec{}
	for _, s := range a.Engine.Tools() {
		by[s.Name] = s
	}
	out := make([]harness.ToolSpec, 0, len(names))
	for _, n := range names {
		if s, ok := by[n]; ok {
			out = append(out, s)
		}
	}
	return out
}

// pending reads the journalled round under k.
func (a *Activities) pending(ctx context.Context, k Key) (*pending, bool, error) {
	b, ok, err := a.Journal.Get(ctx, k)
	if err != nil || !ok {
		return &pending{Round: &harness.Round{}}, false, err
	}
	var p pending
	if err := json.Unmarshal(b, &p); err != nil || p.Round == nil {
		return &pending{Round: &harness.Round{}}, false, refused("journal entry %s is not a round: %v", k, err)
	}
	return &p, true, nil
}

// result reads the journalled result under k.
func (a *Activities) result(ctx context.Context, k Key) (*harness.ToolResult, bool, error) {
	b, ok, err := a.Journal.Get(ctx, k)
	if err != nil || !ok {
		return nil, false, err
	}
	res, err := decodeResult(k, b)
	return res, err == nil, err
}

func decodeResult(k Key, b []byte) (*harness.ToolResult, error) {
	var res harness.ToolResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, refused("journal entry %s is not a result: %v", k, err)
	}
	return &res, nil
}

// figures are the sizes of a result, what its activity returns.
func figures(res *harness.ToolResult, reused bool) toolOutput {
	if res == nil {
		return toolOutput{}
	}
	shown := 0
	for _, p := range res.ModelParts() {
		shown += p.Size()
	}
	return toolOutput{Bytes: res.Bytes, Shown: shown, IsError: res.IsError, Reused: reused}
}

// heartbeat reports the activity alive until the returned stop is called,
// so that a worker that dies is noticed within the heartbeat timeout
// rather than the step timeout. Every activity heartbeats, the store's
// too: a write that waits for the database's lock on a loaded machine is
// not a dead worker (without it, TestScale on SQLite lost turns to
// heartbeat timeouts of BeginTurn and AppendRound).
func heartbeat(ctx context.Context) (stop func()) {
	every := time.Second
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		every = max(hb/4, 10*time.Millisecond)
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

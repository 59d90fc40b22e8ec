package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults used when an Options field is zero.
const (
	DefaultMaxRounds   = 8
	DefaultToolTimeout = 120 * time.Second
	// DefaultMaxStreamBytes bounds an unguarded stream (Options.MaxStreamBytes).
	DefaultMaxStreamBytes = 64 << 20
)

// Selector chooses the tools offered for one turn. It is called once per
// turn; the selection is kept for every round of the turn so the request
// prefix stays stable. See package toolselect.
type Selector interface {
	Select(ctx context.Context, conv *Conversation, input string, tools []ToolSpec) ([]ToolSpec, error)
}

// Approver is asked before every Destructive or Network call (and every
// call to a tool with no risk flags). A false answer becomes an error result
// telling the model the call was not approved.
type Approver func(ctx context.Context, call ToolCall, spec ToolSpec) (bool, error)

// Recorder persists the transcript as a run goes. An error from it stops
// the run: a transcript that cannot be written is not a transcript.
// See package store.
type Recorder interface {
	// BeginTurn is called once the turn has its index and input.
	BeginTurn(ctx context.Context, conv *Conversation, turn *Turn) error
	// AddRound is called when a round is complete: the assistant message,
	// every result of its calls, and its usage.
	AddRound(ctx context.Context, conv *Conversation, turn *Turn, round *Round) error
	// EndTurn is called with the outcome and turn usage set.
	EndTurn(ctx context.Context, conv *Conversation, turn *Turn) error
}

// NoteRecorder is implemented by recorders that persist notes (see
// [AddNote]).
type NoteRecorder interface {
	AddNote(ctx context.Context, conv *Conversation, note *Note) error
}

// RequestRecorder is implemented by recorders that also persist what each
// request offered the model: the system prompt and the tool schemas sent
// (none on a synthesis call, unless Options.KeepToolsOnFinal). The
// transcript holds neither, yet both are part of every request's cost, so
// a replay or an audit of a store needs them.
type RequestRecorder interface {
	// AddRequest is called before each model call with the request about
	// to be sent; req.Turn and req.Round say which round it will produce.
	// A request retried after ErrContextTooLarge is passed again for the
	// same round, and the last one passed is the one that produced it; a
	// request whose model call fails produces no round. The recorder must
	// not modify req, and must copy what it keeps (the slices are shared
	// with the view and the agent). An error stops the run before the
	// model is called.
	AddRequest(ctx context.Context, conv *Conversation, turn *Turn, req *Request) error
}

type recorderKey struct{}

// AddNote appends note to conv and persists it through the recorder the
// agent carries in ctx, when that recorder is a NoteRecorder. Policies use
// it to store a compaction summary while the originals stay in the store.
func AddNote(ctx context.Context, conv *Conversation, note *Note) error {
	conv.Notes = append(conv.Notes, note)
	if nr, ok := ctx.Value(recorderKey{}).(NoteRecorder); ok {
		if err := nr.AddNote(ctx, conv, note); err != nil {
			return fmt.Errorf("harness: recording a note: %w", err)
		}
	}
	return nil
}

// Options configure an Agent. The zero value (or nil) means defaults.
type Options struct {
	// System is the system prompt.
	System string
	// Tools are the tools the agent may call.
	Tools []Tool
	// MaxRounds is the number of tool rounds per turn (default 8); after
	// the last one a synthesis call is made with tools withheld.
	MaxRounds int
	// ToolTimeout bounds each call (default 120 s).
	ToolTimeout time.Duration
	// Guards wrap every tool call, Guards[0] outermost, inside the
	// agent's own timeout and panic recovery.
	Guards []Guard
	// Policies edit each request view, in order.
	Policies []ViewPolicy
	// Selector picks the tools of each turn; nil offers all.
	Selector Selector
	// Approver, when set, is asked before calls that are not read-only.
	Approver Approver
	// Observer receives events.
	Observer Observer
	// Recorder persists the transcript; when it is also a RequestRecorder
	// it gets every request's system prompt and tool schemas.
	Recorder Recorder
	// OnText, when set and the model is a StreamingModel, receives
	// assistant text as it is generated.
	OnText func(string)
	// MaxOutputTokens caps each reply; 0 leaves the provider's default.
	MaxOutputTokens int
	// Workspace is the workspace root handed to guards in CallInfo.
	Workspace string
	// KeepToolsOnFinal keeps the tool schemas in the synthesis request,
	// with calls forbidden (tool_choice "none"), instead of leaving them
	// out. Leaving them out changes the request's prefix, so the synthesis
	// call misses the prompt cache; keeping them costs their schemas once
	// more but keeps the cache. Off by default: the request then carries no
	// tools at all.
	KeepToolsOnFinal bool
	// MaxStreamBytes bounds how much of a streamed result (ToolResult.Stream)
	// the agent reads when no guard consumed the stream (default 64 MiB);
	// beyond it the producer is closed and the result says so. A result
	// ceiling (guard.ResultPolicy) consumes streams itself and spills them,
	// with memory bounded by the ceiling.
	MaxStreamBytes int64
}

// Agent runs turns of a conversation against a model. It is safe for
// concurrent use on different conversations.
type Agent struct {
	model Model
	opts  Options
	tools map[string]*boundTool
	specs []ToolSpec
}

type boundTool struct {
	spec      ToolSpec
	fn        ToolFunc // guards applied
	validator *argsValidator
}

// New returns an agent for model. It fails when two tools share a name or
// a tool's input schema does not compile.
func New(model Model, opts *Options) (*Agent, error) {
	if model == nil {
		return nil, errors.New("harness: New needs a model")
	}
	a := &Agent{model: model, tools: map[string]*boundTool{}}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.MaxRounds <= 0 {
		a.opts.MaxRounds = DefaultMaxRounds
	}
	if a.opts.ToolTimeout <= 0 {
		a.opts.ToolTimeout = DefaultToolTimeout
	}
	if a.opts.MaxStreamBytes <= 0 {
		a.opts.MaxStreamBytes = DefaultMaxStreamBytes
	}
	for _, t := range a.opts.Tools {
		name := t.Spec.Name
		if name == "" {
			return nil, errors.New("harness: a tool has no name")
		}
		if t.Func == nil {
			return nil, fmt.Errorf("harness: tool %q has no function", name)
		}
		if _, dup := a.tools[name]; dup {
			return nil, fmt.Errorf("harness: two tools are named %q", name)
		}
		v, err := compileSchema(name, t.Spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		a.tools[name] = &boundTool{spec: t.Spec, fn: Chain(t.Func, a.opts.Guards...), validator: v}
		a.specs = append(a.specs, t.Spec)
	}
	return a, nil
}

// Tools returns the specs of the agent's tools in the order given.
func (a *Agent) Tools() []ToolSpec { return append([]ToolSpec(nil), a.specs...) }

// Result is the outcome and the figures of one turn.
type Result struct {
	// Answer is the text of the final assistant message.
	Answer  string
	Outcome Outcome
	// Turn is the stored turn (also the conversation's last turn).
	Turn *Turn
	// Usage sums the usage the model reported for every call of the turn,
	// including calls policies made (PolicyUsage).
	Usage Usage
	// PolicyUsage is the part of Usage spent by policies' own model calls,
	// such as a compaction summary. Policies report it as the Usage of an
	// EventPolicy event.
	PolicyUsage Usage
	// Requests counts model calls; ToolRounds the rounds that ran tools.
	Requests   int
	ToolRounds int
	// EvidenceChars sums the tool-result characters shown in every request
	// of the turn; PeakEvidenceChars is the largest single request's.
	EvidenceChars     int
	PeakEvidenceChars int
	// ToolSchemas counts tool schemas serialized in the turn (tools offered
	// × requests) and ToolSchemaBytes their bytes.
	ToolSchemas     int
	ToolSchemaBytes int
}

// Effective is the turn's cache-aware cost in tokens (see Usage.Effective).
func (r *Result) Effective() float64 { return r.Usage.Effective() }

func (r *Result) addRound(round *Round) {
	r.Requests++
	r.Usage = r.Usage.Add(round.Usage)
	r.EvidenceChars += round.Stats.EvidenceChars
	r.PeakEvidenceChars = max(r.PeakEvidenceChars, round.Stats.EvidenceChars)
	r.ToolSchemas += round.Stats.Tools
	r.ToolSchemaBytes += round.Stats.ToolBytes
	if len(round.Results) > 0 {
		r.ToolRounds++
	}
}

// Run runs one user turn of conv: it appends a turn with input, then asks
// the model and runs its tool calls round after round until the model
// answers without calls. When MaxRounds tool rounds are used up, or a
// policy stops the rounds, one final call is made with tools withheld.
//
// The returned Result is never nil. The error is non-nil when the loop could
// not go on (Outcome Error) or ctx was cancelled (Outcome Cancelled); the
// transcript is consistent in both cases: every call the model made has a
// result.
func (a *Agent) Run(ctx context.Context, conv *Conversation, input string) (*Result, error) {
	if conv == nil {
		return &Result{Outcome: Error}, errors.New("harness: Run needs a conversation")
	}
	turn := &Turn{Index: len(conv.Turns) + 1, Input: input, Started: time.Now()}
	conv.Turns = append(conv.Turns, turn)
	res := &Result{Turn: turn}
	var (
		policyMu    sync.Mutex
		policyUsage Usage
	)
	userObs := a.observer()
	obs := func(e Event) {
		if e.Kind == EventPolicy && e.Usage != nil {
			policyMu.Lock()
			policyUsage = policyUsage.Add(*e.Usage)
			policyMu.Unlock()
		}
		userObs(e)
	}
	ctx = WithObserver(ctx, obs)
	if a.opts.Recorder != nil {
		ctx = context.WithValue(ctx, recorderKey{}, a.opts.Recorder)
	}
	emit := func(e Event) {
		e.Conversation, e.Turn = conv.ID, turn.Index
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		obs(e)
	}
	finish := func(outcome Outcome, err error) (*Result, error) {
		turn.Outcome, turn.Ended = outcome, time.Now()
		res.Outcome, res.Answer = outcome, turn.Answer()
		policyMu.Lock()
		res.PolicyUsage = policyUsage
		policyMu.Unlock()
		res.Usage = res.Usage.Add(res.PolicyUsage)
		turn.Usage = res.Usage
		u := res.Usage
		emit(Event{Kind: EventTurnEnd, Outcome: outcome, Usage: &u, Detail: errString(err), Data: map[string]any{
			"requests": res.Requests, "tool_rounds": res.ToolRounds,
			"evidence_chars": res.EvidenceChars, "peak_evidence_chars": res.PeakEvidenceChars,
			"tool_schemas": res.ToolSchemas, "tool_schema_bytes": res.ToolSchemaBytes,
			"effective_tokens": res.Effective(),
		}})
		if a.opts.Recorder != nil {
			// The turn's end is recorded even when ctx is done, so the
			// store never holds a turn without an outcome.
			if rerr := a.opts.Recorder.EndTurn(context.WithoutCancel(ctx), conv, turn); rerr != nil && err == nil {
				err = fmt.Errorf("harness: recording the end of turn %d: %w", turn.Index, rerr)
				turn.Outcome, res.Outcome = Error, Error
			}
		}
		return res, err
	}

	if a.opts.Recorder != nil {
		if err := a.opts.Recorder.BeginTurn(ctx, conv, turn); err != nil {
			return finish(Error, fmt.Errorf("harness: recording turn %d: %w", turn.Index, err))
		}
	}
	emit(Event{Kind: EventTurnStart, Detail: input})

	tools := a.specs
	if a.opts.Selector != nil && len(tools) > 0 {
		sel, err := a.opts.Selector.Select(ctx, conv, input, tools)
		switch {
		case err != nil:
			emit(Event{Kind: EventWarning, Policy: "selector", Detail: "tool selection failed, offering every tool: " + err.Error()})
		case sel != nil:
			tools = sel
		}
	}

	stop, stopReason := Outcome(""), ""
	ids := callIDs(conv)
	for {
		if err := ctx.Err(); err != nil {
			return finish(Cancelled, fmt.Errorf("harness: turn %d: %w", turn.Index, err))
		}
		final := stop != "" || res.ToolRounds >= a.opts.MaxRounds
		var (
			view  *View
			stats RequestStats
			resp  *Response
			err   error
		)
		for attempt := 0; ; attempt++ {
			view, err = a.view(ctx, conv, turn, tools, final, attempt > 0)
			if err != nil {
				return finish(a.failure(ctx), err)
			}
			if !final && view.Stop != "" {
				stop, stopReason = view.Stop, view.StopReason
				emit(Event{Kind: EventPolicy, Policy: "stop", Detail: fmt.Sprintf("tool rounds stopped (%s): %s", stop, stopReason)})
				final = true
				if view, err = a.view(ctx, conv, turn, tools, true, attempt > 0); err != nil {
					return finish(a.failure(ctx), err)
				}
			}
			stats = view.Stats()
			emit(Event{Kind: EventRequest, Round: view.Round, Stats: &stats})
			req := view.Request(a.opts.System, a.opts.MaxOutputTokens)
			if rr, ok := a.opts.Recorder.(RequestRecorder); ok {
				if err := rr.AddRequest(ctx, conv, turn, req); err != nil {
					return finish(a.failure(ctx), fmt.Errorf("harness: recording the request of turn %d round %d: %w", turn.Index, view.Round, err))
				}
			}
			resp, err = a.generate(ctx, req)
			if err == nil || attempt > 0 || !errors.Is(err, ErrContextTooLarge) {
				break
			}
			emit(Event{Kind: EventWarning, Round: view.Round, Detail: "the model rejected the request as too large; compacting and retrying once: " + err.Error()})
		}
		if err != nil {
			return finish(a.failure(ctx), fmt.Errorf("harness: turn %d round %d: model: %w", turn.Index, view.Round, err))
		}
		usage := resp.Usage
		emit(Event{Kind: EventResponse, Round: view.Round, Usage: &usage})
		round := &Round{Index: view.Round, Assistant: resp.Message, Usage: resp.Usage, Final: final, Stats: stats}
		round.Assistant.Role = RoleAssistant
		// The transcript owns its calls: the model's slice may be shared.
		round.Assistant.ToolCalls = append([]ToolCall(nil), round.Assistant.ToolCalls...)
		if final && len(round.Assistant.ToolCalls) > 0 {
			round.Dropped = round.Assistant.ToolCalls
			round.Assistant.ToolCalls = nil
			emit(Event{Kind: EventWarning, Round: round.Index, Detail: fmt.Sprintf("the model asked for %d tool call(s) while tools were withheld; they were not run", len(round.Dropped))})
		}
		fixCallIDs(turn.Index, round, ids)
		if len(round.Assistant.ToolCalls) > 0 {
			round.Results = a.runCalls(ctx, conv, turn, round, view)
		}
		turn.Rounds = append(turn.Rounds, round)
		res.addRound(round)
		if a.opts.Recorder != nil {
			if err := a.opts.Recorder.AddRound(context.WithoutCancel(ctx), conv, turn, round); err != nil {
				return finish(Error, fmt.Errorf("harness: recording turn %d round %d: %w", turn.Index, round.Index, err))
			}
		}
		if err := ctx.Err(); err != nil {
			return finish(Cancelled, fmt.Errorf("harness: turn %d: %w", turn.Index, err))
		}
		if len(round.Assistant.ToolCalls) == 0 {
			switch {
			case stop != "":
				return finish(stop, nil)
			case final:
				return finish(RoundLimit, nil)
			}
			return finish(Answered, nil)
		}
	}
}

func (a *Agent) failure(ctx context.Context) Outcome {
	if ctx.Err() != nil {
		return Cancelled
	}
	return Error
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fixCallIDs gives every call an id that is unique in the conversation:
// some models send none, or reuse "call_0" in every round. seen holds the
// ids used so far and is updated.
func fixCallIDs(turn int, round *Round, seen map[string]bool) {
	for i := range round.Assistant.ToolCalls {
		c := &round.Assistant.ToolCalls[i]
		if c.ID == "" || seen[c.ID] {
			base := fmt.Sprintf("call_t%d_r%d_%d", turn, round.Index, i+1)
			c.ID = base
			for n := 2; seen[c.ID]; n++ {
				c.ID = fmt.Sprintf("%s_%d", base, n)
			}
		}
		seen[c.ID] = true
	}
}

// callIDs returns the ids of every call in conv.
func callIDs(conv *Conversation) map[string]bool {
	ids := map[string]bool{}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			for _, c := range r.Assistant.ToolCalls {
				ids[c.ID] = true
			}
		}
	}
	return ids
}

func (a *Agent) observer() Observer {
	if a.opts.Observer == nil {
		return func(Event) {}
	}
	return a.opts.Observer
}

func (a *Agent) view(ctx context.Context, conv *Conversation, turn *Turn, tools []ToolSpec, final, overflow bool) (*View, error) {
	v := BuildView(conv, turn, a.opts.System, tools, final)
	v.Overflow, v.KeepToolsOnFinal = overflow, a.opts.KeepToolsOnFinal
	for _, p := range a.opts.Policies {
		if err := p.ApplyView(ctx, v); err != nil {
			return nil, fmt.Errorf("harness: view policy: %w", err)
		}
	}
	return v, nil
}

func (a *Agent) generate(ctx context.Context, req *Request) (*Response, error) {
	var (
		resp *Response
		err  error
	)
	if sm, ok := a.model.(StreamingModel); ok && a.opts.OnText != nil {
		resp, err = sm.GenerateStream(ctx, req, a.opts.OnText)
	} else {
		resp, err = a.model.Generate(ctx, req)
	}
	if err == nil && resp == nil {
		err = errors.New("the model returned no response")
	}
	return resp, err
}

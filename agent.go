package harness

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// Defaults used when an Options field is zero.
const (
	DefaultMaxRounds   = 8
	DefaultToolTimeout = 120 * time.Second
	// defaultMaxStreamBytes bounds an unguarded stream (Options.MaxStreamBytes).
	defaultMaxStreamBytes = 64 << 20
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
//
// A recorder that also has either of these methods records what the
// transcript does not hold, and the engine calls it:
//
//	AddNote(ctx context.Context, conv *Conversation, note *Note) error
//	AddRequest(ctx context.Context, conv *Conversation, turn *Turn, req *Request) error
//
// AddNote gets each note a view policy added (View.AddNote), once the
// view's policies are done. AddRequest gets every request before its model
// call, for the system prompt and tool schemas it sends (part of every
// request's cost, so a replay or an audit needs them); req.Turn and
// req.Round say which round it will produce. A request retried after
// ErrContextTooLarge is passed again for the same round; the last one
// passed produced it. AddRequest must not modify req and must copy what it
// keeps (the slices are shared with the view and the agent). An error from
// either stops the run before the model is called.
type Recorder interface {
	// BeginTurn is called once the turn has its index and input.
	BeginTurn(ctx context.Context, conv *Conversation, turn *Turn) error
	// AddRound is called when a round is complete: the assistant message,
	// every result of its calls, and its usage.
	AddRound(ctx context.Context, conv *Conversation, turn *Turn, round *Round) error
	// EndTurn is called with the outcome and turn usage set.
	EndTurn(ctx context.Context, conv *Conversation, turn *Turn) error
}

// noteRecorder and requestRecorder are a Recorder's optional methods.
type (
	noteRecorder interface {
		AddNote(ctx context.Context, conv *Conversation, note *Note) error
	}
	requestRecorder interface {
		AddRequest(ctx context.Context, conv *Conversation, turn *Turn, req *Request) error
	}
)

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
	// agent's own timeout and panic recovery. Nil means none: results
	// reach the model whole. The stack package builds harness's default
	// guards and policies (stack.New(nil).Apply(opts)), as harness run,
	// the proxy and the Temporal worker do.
	Guards []Guard
	// Policies edit each request view, in order; nil means none (the
	// whole transcript is sent every time; see Guards for the defaults).
	Policies []ViewPolicy
	// Selector picks the tools of each turn; nil offers all.
	Selector Selector
	// Approver, when set, is asked before calls that are not read-only.
	Approver Approver
	// Observer receives events.
	Observer Observer
	// Recorder persists the transcript; when it has AddRequest it gets
	// every request's system prompt and tool schemas (see Recorder).
	Recorder Recorder
	// OnText, when set and the model is a StreamingModel, receives
	// assistant text as it is generated.
	OnText func(string)
	// MaxOutputTokens caps each reply; 0 leaves the provider's default.
	MaxOutputTokens int
	// Workspace is the workspace root handed to guards in CallInfo.
	Workspace string
	// Now is the clock the engine reads (nil: time.Now): the times of a
	// turn's start and end (Turn.Started, Turn.Ended) and of each response
	// (Round.Answered), and so View.Idle, the time since the
	// conversation's previous response.
	Now func() time.Time
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

// Agent runs turns of a conversation against a model: the plain loop over
// the steps of its [Engine]. It is safe for concurrent use on different
// conversations.
type Agent struct {
	model Model
	eng   *Engine
}

// New returns an agent for model. It fails when model is nil (a nil
// pointer too, as a provider's constructor returns with its error, say
// for a missing API key), when two tools share a name or a tool's input
// schema does not compile (see NewEngine).
func New(model Model, opts *Options) (*Agent, error) {
	if isNil(model) {
		return nil, errors.New("harness: New needs a model, and got none (did the provider's constructor fail, say for a missing API key?)")
	}
	eng, err := NewEngine(opts)
	if err != nil {
		return nil, err
	}
	return &Agent{model: model, eng: eng}, nil
}

// isNil reports whether m is nil or holds a nil pointer, map, slice,
// func or channel, which calling a method on would panic.
func isNil(m Model) bool {
	if m == nil {
		return true
	}
	switch v := reflect.ValueOf(m); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// Tools returns the specs of the agent's tools in the order given.
func (a *Agent) Tools() []ToolSpec { return a.eng.Tools() }

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
	// such as a compaction summary. Policies add it to View.Spent.
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

// tally returns the figures of turn's rounds: requests, tool rounds,
// usage, evidence and tool schemas, with policyUsage (what policies' own
// model calls spent) as PolicyUsage and in Usage. Turn and Answer are set
// from turn; Outcome is left empty.
func tally(turn *Turn, policyUsage Usage) *Result {
	res := &Result{Turn: turn, PolicyUsage: policyUsage, Answer: turn.Answer()}
	for _, r := range turn.Rounds {
		if r != nil {
			res.addRound(r)
		}
	}
	res.Usage = res.Usage.Add(policyUsage)
	return res
}

// endData returns the figures Engine.EndTurn reports with EventTurnEnd for
// the turn r describes: requests, tool rounds, evidence characters (summed
// and the peak request's), tool schemas sent and their bytes, and
// effective tokens.
func (r *Result) endData() map[string]any {
	return map[string]any{
		"requests": r.Requests, "tool_rounds": r.ToolRounds,
		"evidence_chars": r.EvidenceChars, "peak_evidence_chars": r.PeakEvidenceChars,
		"tool_schemas": r.ToolSchemas, "tool_schema_bytes": r.ToolSchemaBytes,
		"effective_tokens": r.Usage.Effective(),
	}
}

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
	e := a.eng
	turn, err := e.BeginTurn(ctx, conv, input)
	res := &Result{Turn: turn}
	if err != nil {
		return a.finish(ctx, conv, res, Error, err)
	}
	tools := e.SelectTools(ctx, conv, turn, e.specs)
	stop := Outcome("")
	for {
		if err := ctx.Err(); err != nil {
			return a.finish(ctx, conv, res, Cancelled, fmt.Errorf("harness: turn %d: %w", turn.Index, err))
		}
		final := stop != "" || res.ToolRounds >= e.opts.MaxRounds
		view, resp, err := a.ask(ctx, conv, turn, tools, final, res)
		if err != nil {
			return a.finish(ctx, conv, res, failure(ctx), err)
		}
		if view.Stop != "" {
			stop = view.Stop
		}
		round := e.Round(ctx, conv, turn, view, resp)
		if len(round.Assistant.ToolCalls) > 0 {
			round.Results = e.RunCalls(ctx, conv, turn, round, view)
		}
		res.addRound(round)
		if err := e.AppendRound(ctx, conv, turn, round); err != nil {
			return a.finish(ctx, conv, res, Error, err)
		}
		if err := ctx.Err(); err != nil {
			return a.finish(ctx, conv, res, Cancelled, fmt.Errorf("harness: turn %d: %w", turn.Index, err))
		}
		if len(round.Assistant.ToolCalls) == 0 {
			switch {
			case stop != "":
				return a.finish(ctx, conv, res, stop, nil)
			case view.Final:
				return a.finish(ctx, conv, res, RoundLimit, nil)
			}
			return a.finish(ctx, conv, res, Answered, nil)
		}
	}
}

// ask builds the next request and calls the model; a request the model
// rejects as too large (ErrContextTooLarge) is rebuilt once with Overflow
// set, so compaction compacts to its target, and sent again. What the
// views' policies spent is added to res.
func (a *Agent) ask(ctx context.Context, conv *Conversation, turn *Turn, tools []ToolSpec, final bool, res *Result) (*View, *Response, error) {
	for attempt := 0; ; attempt++ {
		view, req, err := a.eng.Request(ctx, conv, turn, tools, final, attempt > 0)
		if err != nil {
			return nil, nil, err
		}
		res.PolicyUsage = res.PolicyUsage.Add(view.Spent)
		resp, err := a.generate(ctx, conv, turn, req)
		switch {
		case err == nil:
			return view, resp, nil
		case attempt > 0 || !errors.Is(err, ErrContextTooLarge):
			return nil, nil, fmt.Errorf("harness: turn %d round %d: model: %w", turn.Index, view.Round, err)
		}
		a.eng.emit(ctx, conv, turn, Event{Kind: EventWarning, Round: view.Round, Detail: "the model rejected the request as too large; compacting and retrying once: " + err.Error()})
	}
}

// finish ends the turn (Engine.EndTurn) with outcome and what the
// turn's policies spent, and returns the turn's figures. A recorder error
// turns the outcome into Error.
func (a *Agent) finish(ctx context.Context, conv *Conversation, res *Result, outcome Outcome, err error) (*Result, error) {
	turn := res.Turn
	res, rerr := a.eng.EndTurn(ctx, conv, turn, outcome, res.PolicyUsage, errString(err))
	if rerr != nil && err == nil {
		err = rerr
		turn.Outcome, res.Outcome = Error, Error
	}
	return res, err
}

func failure(ctx context.Context) Outcome {
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

// idsUnique reports whether every call of round already has an id used by
// no other call, of the round or of conv: the common case, checked without
// indexing every id of a long conversation for each round.
func idsUnique(conv *Conversation, round *Round) bool {
	calls := round.Assistant.ToolCalls
	for i, c := range calls {
		if c.ID == "" {
			return false
		}
		for _, d := range calls[:i] {
			if d.ID == c.ID {
				return false
			}
		}
	}
	if len(calls) == 0 {
		return true
	}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			for _, d := range r.Assistant.ToolCalls {
				for _, c := range calls {
					if d.ID == c.ID {
						return false
					}
				}
			}
		}
	}
	return true
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

// generate makes the model call with ctx carrying the engine's observer,
// so a provider reports its retries (Emit) as the events of the turn.
func (a *Agent) generate(ctx context.Context, conv *Conversation, turn *Turn, req *Request) (*Response, error) {
	ctx = a.eng.withObserverOf(ctx, conv, turn)
	var (
		resp *Response
		err  error
	)
	if sm, ok := a.model.(StreamingModel); ok && a.eng.opts.OnText != nil {
		resp, err = sm.GenerateStream(ctx, req, a.eng.opts.OnText)
	} else {
		resp, err = a.model.Generate(ctx, req)
	}
	if err == nil && resp == nil {
		err = errors.New("the model returned no response")
	}
	return resp, err
}

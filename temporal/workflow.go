package temporal

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentharness/harness"
)

// Names under which the workflow and its activities are registered.
const (
	WorkflowName       = "harness.Turn"
	ActivityBeginTurn  = "harness.BeginTurn"
	ActivityModel      = "harness.Model"
	ActivityTool       = "harness.Tool"
	ActivityAppend     = "harness.AppendRound"
	ActivityEndTurn    = "harness.EndTurn"
	DefaultTaskQueue   = "harness"
	defaultHeartbeat   = 20 * time.Second
	defaultStepTimeout = 10 * time.Minute
	defaultAttempts    = 10
)

// TurnInput starts one turn: the conversation (created on its first turn)
// and the user's input, with the activity timeouts the turn runs under.
// It travels in the workflow's history, so it carries no transcript.
type TurnInput struct {
	Conversation string `json:"conversation"`
	Input        string `json:"input"`
	// Heartbeat is how long an activity may go without a heartbeat before
	// the server retries it on another worker: the time a dead worker
	// holds a step (default 20 s).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// StepTimeout bounds one attempt of a model or tool call (default
	// 10 min); a tool's own timeout (Options.ToolTimeout) should be below it.
	StepTimeout time.Duration `json:"step_timeout,omitempty"`
	// MaxAttempts bounds the attempts of each activity (default 10), and
	// the sessions a turn's tool steps may lose to dead workers before
	// they run unpinned.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Unpinned runs the turn's tool steps on any worker of the task queue,
	// each on whichever takes it, as turns did before pinning. By default
	// (false) they all run on one worker, in a Temporal session created
	// before the turn's first tool call, so that a tool server that keeps
	// state between calls (a browser, a shell session) sees every call of
	// the turn. When that worker dies or stops, the call runs again in a
	// new session on another worker (a call whose result the dead worker
	// journalled is answered from the journal, not run again) and the
	// turn's later calls follow it; after MaxAttempts lost sessions, or
	// when no session-enabled worker takes the session within PinTimeout,
	// the turn's remaining tool steps run unpinned. Unpinned suits tools
	// that keep no state between calls.
	Unpinned bool `json:"unpinned,omitempty"`
	// PinTimeout is how long the turn waits, before its first tool call,
	// for a session-enabled worker (see WorkerOptions) to pin its tool
	// steps to (default 10 s); past it they run unpinned.
	PinTimeout time.Duration `json:"pin_timeout,omitempty"`
}

// TurnOutput is what the workflow returns: small figures and the answer
// (cut at MaxAnswerBytes; the store holds all of it).
type TurnOutput struct {
	Conversation string          `json:"conversation"`
	Turn         int             `json:"turn"`
	Outcome      harness.Outcome `json:"outcome"`
	Rounds       int             `json:"rounds"`
	ToolCalls    int             `json:"tool_calls"`
	Answer       string          `json:"answer,omitempty"`
	// AnswerCut is set when Answer was shortened.
	AnswerCut bool `json:"answer_cut,omitempty"`
	// Error is what ended the turn early (outcome "error"), or "".
	Error string `json:"error,omitempty"`
}

// stepRef locates a step of a turn: the input of the model, tool and
// append activities.
type stepRef struct {
	Conversation string   `json:"conversation"`
	Turn         int      `json:"turn"`
	Round        int      `json:"round"`
	Tools        []string `json:"tools,omitempty"`
	Final        bool     `json:"final,omitempty"`
	CallID       string   `json:"call_id,omitempty"`
}

// beginOutput is what BeginTurn returns.
type beginOutput struct {
	Turn      int      `json:"turn"`
	Tools     []string `json:"tools"`
	MaxRounds int      `json:"max_rounds"`
}

// callRef names one call of a round.
type callRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// modelOutput is what the model activity returns: the round's calls by id
// and the figures the loop decides on. The assistant message itself stays
// in the journal.
type modelOutput struct {
	Round int             `json:"round"`
	Calls []callRef       `json:"calls,omitempty"`
	Final bool            `json:"final,omitempty"`
	Stop  harness.Outcome `json:"stop,omitempty"`
	Spent harness.Usage   `json:"spent"`
}

// toolOutput is what a tool activity returns: sizes, never the payload.
type toolOutput struct {
	Bytes   int  `json:"bytes"`
	Shown   int  `json:"shown"`
	IsError bool `json:"is_error,omitempty"`
	// Reused is set when the result was found in the journal: the tool
	// had already run.
	Reused bool `json:"reused,omitempty"`
}

// endInput closes a turn.
type endInput struct {
	Conversation string          `json:"conversation"`
	Turn         int             `json:"turn"`
	Outcome      harness.Outcome `json:"outcome"`
	Detail       string          `json:"detail,omitempty"`
	PolicyUsage  harness.Usage   `json:"policy_usage"`
}

// endOutput is what EndTurn returns.
type endOutput struct {
	Answer    string `json:"answer,omitempty"`
	AnswerCut bool   `json:"answer_cut,omitempty"`
}

// MaxAnswerBytes bounds the answer a TurnOutput carries.
const MaxAnswerBytes = 32 << 10

// TurnWorkflow runs one user turn: the loop of Agent.Run, with each model
// call, each tool call, the append of each round and the begin and end of
// the turn as activities. It holds only ids and figures; every activity
// rebuilds the conversation from the store. It is deterministic: it reads
// no clock, no randomness and no map order of its own. The model, append,
// begin and end steps run on any worker, the tool steps on one (a
// Temporal session, created before the first tool call and completed when
// the rounds end) unless TurnInput.Unpinned is set; its doc says what
// happens when that worker dies. A history recorded before pinning
// existed replays unpinned.
func TurnWorkflow(ctx workflow.Context, in TurnInput) (TurnOutput, error) {
	out := TurnOutput{Conversation: in.Conversation}
	ctx = workflow.WithActivityOptions(ctx, activityOptions(in))
	tools := newToolSteps(ctx, in)
	var begin beginOutput
	if err := workflow.ExecuteActivity(ctx, ActivityBeginTurn, in).Get(ctx, &begin); err != nil {
		return out, fmt.Errorf("harness: beginning the turn of %s: %w", in.Conversation, err)
	}
	out.Turn = begin.Turn
	outcome, detail, spent := runRounds(ctx, in.Conversation, begin, &out, tools)
	tools.complete()
	var end endOutput
	endIn := endInput{Conversation: in.Conversation, Turn: begin.Turn, Outcome: outcome, Detail: detail, PolicyUsage: spent}
	if err := workflow.ExecuteActivity(ctx, ActivityEndTurn, endIn).Get(ctx, &end); err != nil {
		return out, fmt.Errorf("harness: ending turn %d of %s: %w", begin.Turn, in.Conversation, err)
	}
	out.Outcome, out.Answer, out.AnswerCut, out.Error = outcome, end.Answer, end.AnswerCut, detail
	return out, nil
}

// runRounds runs the rounds of a turn until the model answers without
// calls, each call through tools, and returns the outcome, the error that
// ended the turn early and what the policies spent.
func runRounds(ctx workflow.Context, conv string, begin beginOutput, out *TurnOutput, tools *toolSteps) (harness.Outcome, string, harness.Usage) {
	var spent harness.Usage
	stop, toolRounds := harness.Outcome(""), 0
	for round := 1; ; round++ {
		ref := stepRef{Conversation: conv, Turn: begin.Turn, Round: round, Tools: begin.Tools,
			Final: stop != "" || toolRounds >= begin.MaxRounds}
		var m modelOutput
		if err := workflow.ExecuteActivity(ctx, ActivityModel, ref).Get(ctx, &m); err != nil {
			return harness.Error, err.Error(), spent
		}
		spent = spent.Add(m.Spent)
		if m.Stop != "" {
			stop = m.Stop
		}
		for _, c := range m.Calls {
			cref := ref
			cref.CallID = c.ID
			if _, err := tools.run(cref); err != nil {
				return harness.Error, err.Error(), spent
			}
			out.ToolCalls++
		}
		ref.Final = m.Final
		if err := workflow.ExecuteActivity(ctx, ActivityAppend, ref).Get(ctx, nil); err != nil {
			return harness.Error, err.Error(), spent
		}
		out.Rounds++
		if len(m.Calls) > 0 {
			toolRounds++
			continue
		}
		switch {
		case stop != "":
			return stop, "", spent
		case m.Final:
			return harness.RoundLimit, "", spent
		}
		return harness.Answered, "", spent
	}
}

// activityOptions are the timeouts and retries of every step of a turn.
func activityOptions(in TurnInput) workflow.ActivityOptions {
	hb, step, attempts := in.Heartbeat, in.StepTimeout, in.MaxAttempts
	if hb <= 0 {
		hb = defaultHeartbeat
	}
	if step <= 0 {
		step = defaultStepTimeout
	}
	if attempts <= 0 {
		attempts = defaultAttempts
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: step,
		HeartbeatTimeout:    hb,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        100 * time.Millisecond,
			BackoffCoefficient:     2,
			MaximumInterval:        5 * time.Second,
			MaximumAttempts:        int32(attempts),
			NonRetryableErrorTypes: []string{errTypeRefused},
		},
	}
}

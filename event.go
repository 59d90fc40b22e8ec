package harness

import (
	"context"
	"time"
)

// EventKind names an [Event].
type EventKind string

// The events an agent reports.
const (
	EventTurnStart  EventKind = "turn_start"
	EventRequest    EventKind = "request"     // a request is about to be sent; Stats set
	EventResponse   EventKind = "response"    // the model answered; Usage set
	EventToolResult EventKind = "tool_result" // a call finished; Call and Result set
	EventPolicy     EventKind = "policy"      // a guard or policy acted; Policy and Detail set
	EventWarning    EventKind = "warning"     // something degraded but the loop went on
	EventTurnEnd    EventKind = "turn_end"    // Outcome and Usage (turn total) set
)

// Event is one thing that happened during a run. Which fields are set
// depends on Kind.
type Event struct {
	Kind         EventKind `json:"kind"`
	Time         time.Time `json:"time"`
	Conversation string    `json:"conversation"`
	Turn         int       `json:"turn"`
	Round        int       `json:"round,omitempty"`

	Stats   *RequestStats `json:"stats,omitempty"`
	Usage   *Usage        `json:"usage,omitempty"`
	Call    *ToolCall     `json:"call,omitempty"`
	Result  *ResultInfo   `json:"result,omitempty"`
	Outcome Outcome       `json:"outcome,omitempty"`
	// Policy names the guard or policy that emitted a policy event.
	Policy string `json:"policy,omitempty"`
	// Detail is a human-readable account of what happened.
	Detail string `json:"detail,omitempty"`
	// Data carries policy-specific figures (bytes before and after, cap).
	Data map[string]any `json:"data,omitempty"`
}

// ResultInfo summarises a tool result for events and logs.
type ResultInfo struct {
	Tool string `json:"tool"`
	// BytesIn is the size of the full payload; BytesShown what the model
	// is shown of it.
	BytesIn    int           `json:"bytes_in"`
	BytesShown int           `json:"bytes_shown"`
	IsError    bool          `json:"is_error,omitempty"`
	TimedOut   bool          `json:"timed_out,omitempty"`
	Cuts       []Cut         `json:"cuts,omitempty"`
	Duration   time.Duration `json:"duration"`
}

// Observer receives events. It is called synchronously from the agent's
// goroutines, possibly concurrently for parallel calls, so it must be safe
// for concurrent use and quick.
type Observer func(Event)

type ctxKey int

const (
	callInfoKey ctxKey = iota
	emitterKey
)

// CallInfo tells a tool or guard where the call it is handling stands.
type CallInfo struct {
	Conversation string
	Turn, Round  int
	Spec         ToolSpec
	// Workspace is the agent's workspace root, when it has one.
	Workspace string
	// Transcript is the conversation as the round's calls began: a
	// snapshot, so that a guard still running after its call timed out
	// never races the loop's appends (read-only for guards).
	Transcript *Conversation
	// View is the request view the model answered with this call: what it
	// was shown when it made the call (read-only). Nil outside an agent.
	View *View
	// Message is the assistant message that made the call: the agent's
	// reasoning and every call of the round (read-only). The transcript
	// does not hold it yet — a round is appended once its calls are
	// answered — so this is where a guard finds what the agent was
	// looking for when it called. Nil outside an agent.
	Message *Message
	// Approved is set when the agent's Approver approved this very call.
	// A tool that must never run unasked (an ask-mode workspace's writes)
	// refuses when it is false: with no Approver, nobody was asked.
	Approved bool

	// round collects the results of the round's calls for RoundResults.
	round *roundResults
}

// WithCallInfo returns ctx carrying info. The agent does this for every
// call; tests of guards use it directly.
func WithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey, info)
}

// CallInfoFrom returns the CallInfo carried by ctx.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	info, ok := ctx.Value(callInfoKey).(CallInfo)
	return info, ok
}

// WithObserver returns ctx carrying an observer for [Emit]. The agent puts
// its own observer in the context it passes to tools, guards and policies.
func WithObserver(ctx context.Context, obs Observer) context.Context {
	return context.WithValue(ctx, emitterKey, obs)
}

// Emit reports e to the observer carried by ctx, if any, filling in Time
// and, from the CallInfo in ctx, the conversation, turn and round.
func Emit(ctx context.Context, e Event) {
	obs, _ := ctx.Value(emitterKey).(Observer)
	if obs == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if info, ok := CallInfoFrom(ctx); ok {
		if e.Conversation == "" {
			e.Conversation = info.Conversation
		}
		if e.Turn == 0 {
			e.Turn, e.Round = info.Turn, info.Round
		}
	}
	obs(e)
}

package temporal

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// pinChange is the workflow.GetVersion change id of pinned tool steps:
// a history recorded before it (no marker) replays unpinned, as it ran.
const pinChange = "pin-tool-steps"

// Defaults of the session a turn pins its tool steps to.
const (
	defaultPinTimeout = 10 * time.Second
	// sessionLifetime bounds a session (its creation activity's
	// start-to-close): far above any turn, and a session that outlives it
	// fails and is recreated like one whose worker died.
	sessionLifetime = 24 * time.Hour
)

// toolSteps runs the tool steps of one turn, pinned to one worker by a
// Temporal session so that an MCP server that keeps state between calls
// (a browser, a shell session, a transaction) sees all of the turn's
// calls. The session is created before the turn's first tool call, on
// any session-enabled worker of the task queue (see WorkerOptions); the
// model, append, begin and end steps stay on the shared queue.
//
// When the session's worker dies (its session heartbeat stops) or stops,
// the session fails: the call is run again in a new session, on another
// worker, and the turn's later calls follow it there. The journal makes
// the repeat safe: a call whose result the dead worker journalled is
// answered from the journal, not run again. After MaxAttempts lost
// sessions, or when no session-enabled worker takes the session within
// TurnInput.PinTimeout (an older worker, or one built without
// WorkerOptions), the turn's remaining tool steps run unpinned on the
// shared queue, as they did before sessions: the turn finishes either way.
type toolSteps struct {
	base    workflow.Context // the turn's context: the shared queue
	session workflow.Context // the open session's context, or nil
	pin     bool             // false once the steps run unpinned
	opts    workflow.SessionOptions
	lost    int // sessions lost to a dead worker so far
	maxLost int
}

// newToolSteps decides whether the turn pins its tool steps: a turn of a
// history recorded before pinning (workflow.GetVersion) and one whose
// input asks for it (TurnInput.Unpinned) do not.
func newToolSteps(ctx workflow.Context, in TurnInput) *toolSteps {
	v := workflow.GetVersion(ctx, pinChange, workflow.DefaultVersion, 1)
	creation := in.PinTimeout
	if creation <= 0 {
		creation = defaultPinTimeout
	}
	ao := activityOptions(in)
	return &toolSteps{
		base: ctx,
		pin:  v >= 1 && !in.Unpinned,
		opts: workflow.SessionOptions{
			CreationTimeout:  creation,
			ExecutionTimeout: sessionLifetime,
			HeartbeatTimeout: ao.HeartbeatTimeout,
		},
		maxLost: int(ao.RetryPolicy.MaximumAttempts),
	}
}

// run runs one tool step, in the turn's session when it is pinned.
func (s *toolSteps) run(ref stepRef) (toolOutput, error) {
	for {
		ctx := s.context()
		var out toolOutput
		err := workflow.ExecuteActivity(ctx, ActivityTool, ref).Get(ctx, &out)
		if err == nil || !s.sessionLost(ctx) {
			return out, err
		}
		s.lost++
		s.session = nil
		workflow.GetLogger(s.base).Warn("harness: the worker of the turn's tool session was lost; the call runs again in a new session",
			"call", ref.CallID, "lost", s.lost)
		if s.lost >= s.maxLost {
			s.pin = false
		}
	}
}

// context returns the context the next tool step runs in: the open
// session's, a new session's, or the shared queue's when the turn runs
// unpinned or no session could be created.
func (s *toolSteps) context() workflow.Context {
	if !s.pin {
		return s.base
	}
	if s.session != nil {
		return s.session
	}
	opts := s.opts
	ctx, err := workflow.CreateSession(s.base, &opts)
	if err != nil {
		// No session-enabled worker took it in time (or the turn is
		// being canceled, which the step then reports).
		workflow.GetLogger(s.base).Warn("harness: no worker took the turn's tool session; its tool steps run unpinned", "error", err)
		s.pin = false
		return s.base
	}
	s.session = ctx
	return ctx
}

// sessionLost reports whether a step run in ctx failed because its
// session failed (its worker died or stopped), not because the step or the
// turn did.
func (s *toolSteps) sessionLost(ctx workflow.Context) bool {
	if ctx == s.base || s.base.Err() != nil {
		return false
	}
	info := workflow.GetSessionInfo(ctx)
	return info != nil && info.SessionState == workflow.SessionStateFailed
}

// complete releases the turn's session, if one is open, on its worker.
func (s *toolSteps) complete() {
	if s.session != nil {
		workflow.CompleteSession(s.session)
		s.session = nil
	}
}

package harness

import (
	"context"
	"sync"
)

// roundResults collects the results of one round's calls as they complete,
// for guards that compare a result with those of earlier calls of the same
// round ([CallInfo.RoundResults]): the transcript a guard sees is a
// snapshot taken as the round's calls began, so it holds none of them.
type roundResults struct {
	mu      sync.Mutex
	results map[string]*ToolResult
	// pending holds, per call expected to complete, a channel closed when
	// it does. RunCalls expects every call of the round before the first
	// starts, so a call never misses an earlier one that runs beside it.
	pending map[string]chan struct{}
}

func newRoundResults() *roundResults {
	return &roundResults{results: map[string]*ToolResult{}, pending: map[string]chan struct{}{}}
}

// expect marks calls as started: a guard asking for one waits until it
// completes.
func (r *roundResults) expect(calls []ToolCall) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range calls {
		if _, ok := r.results[c.ID]; !ok && r.pending[c.ID] == nil {
			r.pending[c.ID] = make(chan struct{})
		}
	}
}

// done records the result of call id as the transcript will store it.
func (r *roundResults) done(id string, res *ToolResult) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results[id] = res
	if ch := r.pending[id]; ch != nil {
		close(ch)
		delete(r.pending, id)
	}
}

// get returns the result of call id: at once when it has completed or was
// never expected (nil), after it completes when it is running, or nil
// when ctx ends first.
func (r *roundResults) get(ctx context.Context, id string) *ToolResult {
	r.mu.Lock()
	res, ch := r.results[id], r.pending[id]
	r.mu.Unlock()
	if ch == nil {
		return res
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.results[id]
}

// RoundResults returns the results of the calls made before call in its
// round (Message.ToolCalls order), one per call, as the transcript will
// store them: payload, model copy and cuts. A call of the round still
// running beside this one (read-only calls run in parallel) is waited
// for, so the answer does not depend on which finished first; a call that
// has not run under this round's CallInfo (a driver that admits calls
// one by one and skipped it, or a CallInfo made by hand) gets nil, as do
// all calls when ctx ends while waiting. Only earlier calls are ever
// waited for, so guards of one round cannot wait on each other in a
// cycle. Nil when info was made neither by [Engine.CallInfo] nor by
// [CallInfo.WithRoundResults], or has no Message.
func (info CallInfo) RoundResults(ctx context.Context, call *ToolCall) []*ToolResult {
	if info.round == nil || info.Message == nil || call == nil {
		return nil
	}
	var out []*ToolResult
	for _, c := range info.Message.ToolCalls {
		if c.ID == call.ID {
			return out
		}
		out = append(out, info.round.get(ctx, c.ID))
	}
	return nil // call is not of this round
}

// WithRoundResults returns info whose RoundResults answers results for the
// calls of its round they belong to (matched by CallID), for a driver that
// runs each call of a round as its own step (a durable workflow's
// activity) and holds the earlier calls' results from those steps: the
// results as the transcript will store them, model copy and cuts
// included. The guards of a call admitted under the returned info then
// see the round's earlier calls as they would under [Engine.RunCalls]. A
// call of the round that results do not hold answers nil, at once; nil
// results and results without a CallID are ignored. The order of the
// calls is info.Message's, so RoundResults still answers nil without a
// Message. The returned info collects on its own: nothing collected under
// info is carried over, and a call admitted under the returned info is not
// seen through info or its other copies, so steps never share state.
func (info CallInfo) WithRoundResults(results ...*ToolResult) CallInfo {
	r := newRoundResults()
	for _, res := range results {
		if res != nil && res.CallID != "" {
			r.results[res.CallID] = res
		}
	}
	info.round = r
	return info
}

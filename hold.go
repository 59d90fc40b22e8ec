package harness

import (
	"context"
	"sync"
)

// holdKey carries the *eventHold of one engine (see Engine.HoldEvents):
// keyed by the engine, so that holds of two engines in one context never
// hide each other.
type holdKey struct{ eng *Engine }

// eventHold keeps the events one engine's steps report under a context
// until release.
type eventHold struct {
	// next receives the events on release: Options.Observer, or the hold
	// of an enclosing HoldEvents of the same engine.
	next Observer
	// mu is held while release passes the held events on, so that an
	// event reported meanwhile waits and arrives after them, in order.
	mu       sync.Mutex
	held     []Event
	released bool
}

// HoldEvents returns ctx under which this engine's steps hold the events
// they report — its own and those its guards, policies and tools report
// through Emit — instead of passing them to Options.Observer, and release,
// which passes the held events to Options.Observer in the order they were
// reported (fields unchanged) and lets later ones through as they come. A
// hold inside another hold of the same engine releases into it.
//
// It is for a driver whose step may fail after reporting and then run
// again: a durable workflow's activity, retried by the cluster, rebuilds
// the same view and reports the same events. The driver calls release
// once the attempt's output is kept, and never when the attempt fails, so
// the failed attempt's events are dropped and only the retry's reach the
// observer. The hold belongs to this engine: another engine's steps under
// the returned context (an agent run by one of this engine's tools)
// report to their own observer. Without Options.Observer, ctx is returned
// as it is and release does nothing. Release may be called more than once.
func (e *Engine) HoldEvents(ctx context.Context) (held context.Context, release func()) {
	if e.opts.Observer == nil {
		return ctx, func() {}
	}
	h := &eventHold{next: e.observer(ctx)}
	return context.WithValue(ctx, holdKey{e}, h), h.release
}

// observer is where e's steps under ctx report: the hold HoldEvents put
// in ctx for e, else Options.Observer (nil when there is none).
func (e *Engine) observer(ctx context.Context) Observer {
	if h, ok := ctx.Value(holdKey{e}).(*eventHold); ok {
		return h.observe
	}
	return e.opts.Observer
}

// observe holds ev, or passes it on once the hold is released.
func (h *eventHold) observe(ev Event) {
	h.mu.Lock()
	if !h.released {
		h.held = append(h.held, ev)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.next(ev)
}

// release passes the held events on, in order, and ends the hold.
func (h *eventHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range h.held {
		h.next(ev)
	}
	h.held, h.released = nil, true
}

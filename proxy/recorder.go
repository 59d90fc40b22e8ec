package proxy

import (
	"context"
	"github.com/agentharness/harness"
	"sync"

	"github.com/agentharness/harness/store/sqlite"
)

// recorder writes to the store off the request path, in the order the
// proxy observed things (one queue, one writer), so a store write never
// adds latency to a model call and a conversation's turns and rounds reach
// the store in order.
type recorder struct {
	st   *sqlite.Store
	logf func(string, ...any)

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []job
	busy    bool
	closed  bool
	done    chan struct{}
	errs    int64
	lastErr error

	// turns holds one Turn per (conversation, turn index) for the store:
	// a store knows a turn in progress by the Turn it began (a second
	// turn object on the same conversation is refused as busy), so every
	// write of a turn must pass the same one. Only jobs touch it, and jobs
	// run one at a time.
	turns map[turnID]*harness.Turn
}

// turnID names a turn of a conversation.
type turnID struct {
	conv  string
	index int
}

// turn returns the recorder's Turn for snap's conversation and index, set
// to snap. Call it only from a job.
func (r *recorder) turn(convID string, snap harness.Turn) *harness.Turn {
	if r.turns == nil {
		r.turns = map[turnID]*harness.Turn{}
	}
	id := turnID{convID, snap.Index}
	t := r.turns[id]
	if t == nil {
		t = new(harness.Turn)
		r.turns[id] = t
	}
	*t = snap
	if snap.Outcome != "" {
		delete(r.turns, id) // ended: the next write of it is the last
	}
	return t
}

// job is one store write.
type job func(ctx context.Context, st *sqlite.Store) error

func newRecorder(st *sqlite.Store, logf func(string, ...any)) *recorder {
	r := &recorder{st: st, logf: logf, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	if st == nil {
		close(r.done)
		return r
	}
	go r.run()
	return r
}

// add queues a write (a no-op without a store).
func (r *recorder) add(j job) {
	if r.st == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.queue = append(r.queue, j)
	r.cond.Broadcast()
}

func (r *recorder) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.cond.Wait()
		}
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return
		}
		batch := r.queue
		r.queue = nil
		r.busy = true
		r.mu.Unlock()
		for _, j := range batch {
			// A write is not cancelled with the request that caused it:
			// the store must get every byte the proxy saw.
			if err := j(context.Background(), r.st); err != nil {
				r.mu.Lock()
				r.errs++
				r.lastErr = err
				r.mu.Unlock()
				r.logf("harness proxy: recording: %v", err)
			}
		}
		r.mu.Lock()
		r.busy = false
		r.cond.Broadcast()
		r.mu.Unlock()
	}
}

// flush waits until the queue is empty and no write is running.
func (r *recorder) flush(ctx context.Context) error {
	if r.st == nil {
		return nil
	}
	return waitUntil(ctx, &r.mu, r.cond, func() bool { return len(r.queue) == 0 && !r.busy })
}

// close records what is queued and stops the writer.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// errors returns how many writes failed.
func (r *recorder) errors() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

package proxy

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/store"
)

// recordStore is what the recorder needs of a store: the turn writes, the
// claim on a turn another writer began or left (store.TurnResumer), and
// the rounds a turn already holds (one entry per stored round).
type recordStore interface {
	harness.Recorder
	AddRequest(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error
	store.TurnResumer
	Requests(ctx context.Context, convID string, turn int) ([]store.Request, error)
}

// recorder writes to the store off the request path, so a store write
// never adds latency to a model call. Each conversation has its own queue,
// written in the order the proxy observed things by one goroutine at a
// time (so its turns and rounds reach the store in order), and a
// conversation waiting for another writer (store.ErrConversationBusy)
// delays no other conversation.
type recorder struct {
	st   recordStore
	logf func(string, ...any)
	// busy is how the writes refused busy are retried.
	busy busyRetry
	// probe, when set, tells a store that does not answer from a write
	// that failed on its own; outage and back report an outage's start
	// and end (replica_outage.go).
	probe  func(context.Context) error
	outage func(error)
	back   func()
	// after is the timer of settle's bound (time.After; tests fire it).
	after func(time.Duration) <-chan time.Time

	mu     sync.Mutex
	cond   *sync.Cond
	convs  map[string]*convQueue
	closed bool
	// errs counts failed writes, retries the busy refusals retried.
	errs, retries int64
	lastErr       error
}

// convQueue is the queue of one conversation's writes.
type convQueue struct {
	id    string
	queue []op
	// running is set while a goroutine writes the queue; written once
	// every write queued is done, the turns not yet suspended; failed
	// when a write failed since the last marker.
	running, written, failed bool
}

// opKind says what a queued write does.
type opKind int

const (
	opBegin opKind = iota
	opRequest
	opRound
	opEnd
	// opMark writes nothing: it sends on mark, once every write queued
	// before it is done, whether those since the last marker succeeded.
	opMark
)

// op is one queued write of a turn: turn is a snapshot of the proxy's
// mirror of it when the write was queued.
type op struct {
	kind  opKind
	turn  harness.Turn
	round *harness.Round
	req   *harness.Request
	// mark is an opMark's.
	mark chan bool
	// foreign, when set, marks a write another replica queued first
	// (replica_mirror.go): it is skipped when that replica stored it.
	foreign storedElsewhere
	// fill, when set, completes the write with what another replica's
	// answer claim holds before it is made (replica_answer.go).
	fill func(context.Context, *op)
}

// storedElsewhere tells whether another replica stored the writes it
// guards.
type storedElsewhere interface {
	// settled reports, without waiting, whether stored will not wait.
	settled() bool
	// stored waits, bounded, and reports whether the other replica
	// stored them.
	stored(ctx context.Context) bool
}

// busyRetry is how a write refused because another writer holds the
// conversation is tried again: policy's backoff (BaseDelay doubling to
// MaxDelay, with jitter) for at most budget in all.
type busyRetry struct {
	policy retry.Policy
	budget time.Duration
}

// defaultBusy retries for up to a minute. Another proxy holds a
// conversation only while it writes (it suspends the turn when idle), so
// a refusal usually clears within a wait or two; a writer holding a whole
// turn (harness run on the same conversation) is waited for that long,
// then the write fails and is counted. The budget, not a count, ends the
// retries.
var defaultBusy = busyRetry{policy: retry.Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: time.Second, MaxRetries: math.MaxInt32}, budget: time.Minute}

func newRecorder(st recordStore, logf func(string, ...any)) *recorder {
	r := &recorder{st: st, logf: logf, busy: defaultBusy, convs: map[string]*convQueue{}, after: time.After}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// add queues a write of conversation convID (a no-op without a store).
func (r *recorder) add(convID string, o op) {
	if r.st == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	q := r.convs[convID]
	if q == nil {
		q = &convQueue{id: convID}
		r.convs[convID] = q
	}
	q.queue = append(q.queue, o)
	q.written = false
	if !q.running {
		q.running = true
		go r.run(q)
	}
}

// run writes q until it is empty, then suspends the turns it holds and
// forgets q.
func (r *recorder) run(q *convQueue) {
	w := &turnWriter{r: r, conv: harness.NewConversation(q.id), turns: map[int]*turnRec{}}
	// A write is not cancelled with the request that caused it: the store
	// must get every byte the proxy saw.
	ctx := context.Background()
	for {
		r.mu.Lock()
		batch := q.queue
		q.queue = nil
		if len(batch) == 0 {
			// Written: the next replica may read it back (flushConv)
			// while the turns are suspended.
			q.written = true
			r.cond.Broadcast()
			r.mu.Unlock()
			// Suspend outside the lock; a write queued meanwhile finds q
			// still running and is taken by the loop below.
			w.suspendAll(ctx)
			r.mu.Lock()
			if len(q.queue) > 0 {
				r.mu.Unlock()
				continue
			}
			q.running = false
			delete(r.convs, q.id)
			r.cond.Broadcast()
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		for _, o := range batch {
			if o.kind == opMark {
				o.mark <- !q.failed
				q.failed = false
				continue
			}
			if o.foreign != nil {
				if !o.foreign.settled() {
					// The other replica's writes may need a turn this
					// writer holds.
					w.suspendAll(ctx)
				}
				if o.foreign.stored(ctx) {
					continue
				}
			}
			if o.fill != nil {
				o.fill(ctx, &o)
			}
			if err := r.applyOrWait(ctx, w, o); err != nil {
				q.failed = true
				r.fail(err)
			}
		}
	}
}

// fail counts and logs a write that failed.
func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.errs++
	r.lastErr = err
	r.mu.Unlock()
	r.logf("harness proxy: recording: %v", err)
}

// retried counts a write refused busy that will be tried again.
func (r *recorder) retried() {
	r.mu.Lock()
	r.retries++
	r.cond.Broadcast()
	r.mu.Unlock()
}

// flush waits until no write is queued or running.
func (r *recorder) flush(ctx context.Context) error {
	if r.st == nil {
		return nil
	}
	return waitUntil(ctx, &r.mu, r.cond, func() bool { return len(r.convs) == 0 })
}

// flushConv waits until the store holds every write of conversation
// convID queued so far (its turns may still be being suspended: the
// writer of the next request retries while they are, see turnwriter.go).
func (r *recorder) flushConv(ctx context.Context, convID string) error {
	if r.st == nil {
		return nil
	}
	return waitUntil(ctx, &r.mu, r.cond, func() bool { q := r.convs[convID]; return q == nil || q.written })
}

// marker returns a channel that receives, once every write of
// conversation convID queued so far is done, whether those queued since
// the last marker succeeded (nil: nothing will be sent).
func (r *recorder) marker(convID string) <-chan bool {
	if r.st == nil || r.isClosing() {
		return nil
	}
	ch := make(chan bool, 1)
	r.add(convID, op{kind: opMark, mark: ch})
	return ch
}

// settleWait bounds how long reading a conversation back from the store
// waits for its queued writes (see settle).
const settleWait = 5 * time.Second

// errUnsettled is settle's verdict on writes still queued after its
// bound.
var errUnsettled = errors.New("its writes are still queued")

// settle waits until no write of conversation convID is queued or
// running, for up to settleWait: a write waiting for a store that does
// not answer (up to outageBudget) must not hold the request that reads
// the conversation back. It returns errUnsettled when the bound ends the
// wait, ctx's error when ctx does.
func (r *recorder) settle(ctx context.Context, convID string) error {
	if r.st == nil {
		return nil
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bound := r.after(settleWait)
	go func() {
		select {
		case <-bound:
			cancel(errUnsettled)
		case <-wctx.Done():
		}
	}()
	if r.flushConv(wctx, convID) == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errUnsettled
}

// pending reports whether writes of conversation convID are queued or
// running (suspending its turns included).
func (r *recorder) pending(convID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.convs[convID] != nil
}

// close records what is queued and stops taking writes.
func (r *recorder) close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	_ = r.flush(context.Background())
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

// busyRetries returns how many writes were refused busy and retried.
func (r *recorder) busyRetries() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries
}

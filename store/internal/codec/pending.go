package codec

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"math"
	"sync"
	"time"

	"github.com/agentharness/harness"
)

// Pending holds what each request in flight offers until its round is
// stored in the same process: the round row does not exist before the
// model answers, and writing both in the round's transaction keeps a run
// at one transaction per round (store/sqlite; store/postgres, whose
// rounds another process may store, writes each request when it is made).
// It is safe for concurrent use; the zero value is empty.
type Pending struct {
	mu sync.Mutex
	m  map[pendingKey]pendingEntry
	// seq orders entries by when they were put, so the oldest goes first
	// when MaxPending is reached.
	seq uint64
}

// MaxPending is how many requests a store keeps waiting for their rounds.
// A request whose round another process stores (two processes on one
// database) is never taken by this one, so without a bound they would
// pile up; past it the oldest is forgotten and its round, if this store
// ever writes it, is recorded without its request.
const MaxPending = 4096

type pendingEntry struct {
	r   *Request
	seq uint64
}

type pendingKey struct {
	conv        string
	turn, round int
}

// Add keeps what req offers for its round of turn: the request's
// system prompt and tool schemas, copied and hashed (RequestOf, which
// refuses a conversation without an id, or a missing turn or request).
func (p *Pending) Add(conv *harness.Conversation, turn *harness.Turn, req *harness.Request) error {
	r, err := RequestOf(conv, turn, req)
	if err != nil {
		return err
	}
	p.Put(conv.ID, turn.Index, req.Round, r)
	return nil
}

// Put keeps r for round round of turn turn; a retried request replaces
// the one before it.
func (p *Pending) Put(conv string, turn, round int, r *Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[pendingKey]pendingEntry{}
	}
	k := pendingKey{conv, turn, round}
	if _, ok := p.m[k]; !ok && len(p.m) >= MaxPending {
		p.dropOldest()
	}
	p.seq++
	p.m[k] = pendingEntry{r: r, seq: p.seq}
}

// dropOldest forgets the entry put longest ago. A linear scan, made only
// when the bound is reached.
func (p *Pending) dropOldest() {
	var oldest pendingKey
	seq := uint64(math.MaxUint64)
	for k, e := range p.m {
		if e.seq < seq {
			oldest, seq = k, e.seq
		}
	}
	delete(p.m, oldest)
}

// Take removes and returns the request of a round, or nil. It also
// forgets the requests of the turn's earlier rounds: rounds are stored in
// order, so those rounds are stored already (by another process, which
// did not have them) and their requests can never be taken.
func (p *Pending) Take(conv string, turn, round int) *Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := pendingKey{conv, turn, round}
	e := p.m[k]
	delete(p.m, k)
	for o := range p.m {
		if o.conv == conv && o.turn == turn && o.round < round {
			delete(p.m, o)
		}
	}
	return e.r
}

// Drop forgets the requests of a turn (a model call that failed leaves
// one behind).
func (p *Pending) Drop(conv string, turn int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.m {
		if k.conv == conv && k.turn == turn {
			delete(p.m, k)
		}
	}
}

// Len is how many requests wait for their round.
func (p *Pending) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// MaxEvents is how many events wait for the next transcript write before
// they are written on their own.
const MaxEvents = 256

// Events queues the events a store observed until its next write, and
// keeps the first error met storing one. It is safe for concurrent use;
// the zero value is empty.
type Events struct {
	mu      sync.Mutex
	pending []Queued
	err     error
	// prefix and next make each queued event's key (see Queued.Key).
	prefix [8]byte
	next   uint64
	// OnError, when set, receives every error Report is given.
	OnError func(error)
}

// Queued is an event waiting for a write, with the key it was given when
// it was queued.
type Queued struct {
	// Key names this observation of the event, and no other event of any
	// store: a random prefix drawn once per queue, then the queue's
	// counter. It is kept through Take and Requeue, so a store can tell
	// an event it is given again from a new one: a write whose COMMIT
	// reached the server but whose reply was lost stored the event, and
	// requeued it all the same.
	Key   [16]byte
	Event harness.Event
}

// Add queues e (its Time set to now when zero) under a new key and
// returns how many events wait.
func (q *Events) Add(e harness.Event) int {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next == 0 {
		// crypto/rand.Read never fails (it crashes the program instead).
		_, _ = rand.Read(q.prefix[:])
	}
	q.next++
	var k [16]byte
	copy(k[:8], q.prefix[:])
	binary.BigEndian.PutUint64(k[8:], q.next)
	q.pending = append(q.pending, Queued{Key: k, Event: e})
	return len(q.pending)
}

// Observe queues e and, when MaxEvents wait, writes them with flush (the
// store's Flush), reporting its error: an observer cannot fail a run.
func (q *Events) Observe(e harness.Event, flush func(context.Context) error) {
	if q.Add(e) >= MaxEvents {
		if err := flush(context.Background()); err != nil {
			q.Report(err)
		}
	}
}

// Take removes and returns the waiting events with their keys.
func (q *Events) Take() []Queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pending
	q.pending = nil
	return p
}

// Waiting reports whether events wait.
func (q *Events) Waiting() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) > 0
}

// Requeue puts back events whose transaction failed, ahead of newer ones.
// They keep their keys.
func (q *Events) Requeue(events []Queued) {
	if len(events) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(events, q.pending...)
}

// Report keeps err when it is the first, and passes it to OnError.
func (q *Events) Report(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	if q.OnError != nil {
		q.OnError(err)
	}
}

// Err returns the first error reported, or nil.
func (q *Events) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

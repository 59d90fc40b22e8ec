package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/store"
)

// A proxied turn belongs to the client, not to the proxy process that saw
// it begin: the client goes on with it after the proxy restarts, or
// through another proxy on the same store. So the proxy claims a
// conversation only while it writes: before writing a turn it does not
// hold, it resumes it (store.TurnResumer), which takes over a claim a
// dead proxy left and reopens the turn if that takeover marked it
// Interrupted; when its queue is empty it suspends the turn, leaving it
// open and unclaimed for whichever writer the client's next request
// reaches. Another proxy may have stored some of the turn's rounds (its
// client's request came first): the store refuses such a round a second
// time, and the writer, seeing it stored, skips it, so no round is stored
// twice and none is lost.

// turnWriter writes one conversation's queue (see recorder.run).
type turnWriter struct {
	r     *recorder
	conv  *harness.Conversation
	turns map[int]*turnRec
}

// turnRec is the writer's state of one turn.
type turnRec struct {
	// t is the Turn passed to the store for every write of the turn.
	t *harness.Turn
	// held is set while this store holds the turn (begun or resumed, not
	// suspended).
	held bool
	// stored holds the indexes of the rounds the store holds of the
	// turn.
	stored map[int]bool
	// closed is set once the turn has ended in the store (this writer
	// ended it, or the store refused to resume it: why): its later
	// writes are skipped.
	closed bool
	why    error
}

// apply performs one queued write.
func (w *turnWriter) apply(ctx context.Context, o op) error {
	switch o.kind {
	case opRequest:
		// PostgreSQL stores it at once, so any replica may store its round.
		if tr := w.rec(o.turn); !tr.closed {
			return w.r.st.AddRequest(ctx, w.conv, tr.t, o.req)
		}
		return nil
	case opBegin:
		return w.begin(ctx, o.turn)
	case opRound, opEnd:
		// A refusal (another writer took the turn over meanwhile) means
		// resuming again: that writer may have stored rounds.
		return w.retry(ctx, func() error { return w.write(ctx, o) })
	}
	return fmt.Errorf("proxy: unknown write %d", o.kind)
}

// write stores a round or the end of a turn, resuming the turn first
// when this store does not hold it.
func (w *turnWriter) write(ctx context.Context, o op) error {
	tr, err := w.resume(ctx, o.turn)
	if err != nil {
		return err
	}
	if tr.closed {
		if o.kind == opRound && !tr.stored[o.round.Index] {
			w.r.logf("harness proxy: warning: conversation %s: round %d of turn %d not recorded: %v", w.conv.ID, o.round.Index, o.turn.Index, tr.why)
		}
		return nil
	}
	*tr.t = o.turn
	if o.kind == opRound {
		if tr.stored[o.round.Index] {
			return nil // stored already, by another proxy or before a restart
		}
		err := w.r.st.AddRound(ctx, w.conv, tr.t, o.round)
		if errors.Is(err, store.ErrConversationBusy) {
			tr.held = false
			return err
		}
		if err != nil {
			// Another proxy, whose client's request came first, may have
			// stored the round: the store refuses it a second time. The
			// claim is given up before the stored rounds are read: a
			// store may pin a connection to it (PostgreSQL does), and
			// the read would wait for another, which writers pinning the
			// whole pool never give back.
			w.suspendAll(ctx)
			if serr := w.readStored(ctx, tr); serr != nil || !tr.stored[o.round.Index] {
				return errors.Join(err, serr)
			}
		}
		tr.stored[o.round.Index] = true
		return nil
	}
	err = w.r.st.EndTurn(ctx, w.conv, tr.t)
	// EndTurn gives the claim up, stored or not.
	tr.held = false
	if errors.Is(err, store.ErrConversationBusy) {
		return err
	}
	tr.closed, tr.why = true, fmt.Errorf("turn %d has ended", o.turn.Index)
	return err
}

// rec returns the writer's state of turn, creating it.
func (w *turnWriter) rec(turn harness.Turn) *turnRec {
	tr := w.turns[turn.Index]
	if tr == nil {
		t := turn
		tr = &turnRec{t: &t, stored: map[int]bool{}}
		w.turns[turn.Index] = tr
	}
	return tr
}

// begin stores a new turn. A turn the store has already (another proxy
// began it, with the same input) is resumed instead.
func (w *turnWriter) begin(ctx context.Context, turn harness.Turn) error {
	w.suspendAll(ctx) // one turn of a conversation at a time
	tr := w.rec(turn)
	if tr.closed {
		return nil
	}
	*tr.t = turn
	err := w.retry(ctx, func() error { return w.r.st.BeginTurn(ctx, w.conv, tr.t) })
	if err == nil {
		tr.held = true
		clear(tr.stored)
		return nil
	}
	if errors.Is(err, store.ErrConversationBusy) {
		return err
	}
	if rerr := w.retry(ctx, func() error { _, err := w.resume(ctx, turn); return err }); rerr != nil {
		return errors.Join(err, rerr)
	}
	return nil // resumed, or ended already (closed)
}

// resume makes this store the writer of turn unless it is already. A
// refusal as busy is returned for the caller to retry. A turn the store refuses with
// store.ErrTurnEnded (the client sent a turn that has ended, or that a
// later turn follows) is not reopened: its state is marked closed, and
// its writes are skipped.
func (w *turnWriter) resume(ctx context.Context, turn harness.Turn) (*turnRec, error) {
	tr := w.rec(turn)
	if tr.held || tr.closed {
		return tr, nil
	}
	tr.t.Index, tr.t.Input = turn.Index, turn.Input
	err := w.r.st.ResumeTurn(ctx, w.conv, tr.t)
	if err != nil && !errors.Is(err, store.ErrTurnEnded) {
		return nil, fmt.Errorf("resuming turn %d of %s: %w", turn.Index, w.conv.ID, err)
	}
	tr.held, tr.closed, tr.why = err == nil, err != nil, err
	if tr.closed {
		// Which of its rounds are stored tells a round that goes
		// unrecorded (warned of) from one sent again.
		if err := w.readStored(ctx, tr); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// readStored reads which rounds the store holds of turn tr (one entry per
// stored round). It is read only when a write shows that another writer
// has been at the turn, since it grows with the turn.
func (w *turnWriter) readStored(ctx context.Context, tr *turnRec) error {
	rounds, err := w.r.st.Requests(ctx, w.conv.ID, tr.t.Index)
	if err != nil {
		return fmt.Errorf("reading the stored rounds of turn %d of %s: %w", tr.t.Index, w.conv.ID, err)
	}
	clear(tr.stored)
	for _, q := range rounds {
		tr.stored[q.Round] = true
	}
	return nil
}

// suspendAll gives up this store's claim on every turn it holds, leaving
// them open for the next writer.
func (w *turnWriter) suspendAll(ctx context.Context) {
	for _, tr := range w.turns {
		if !tr.held {
			continue
		}
		tr.held = false
		if err := w.r.st.SuspendTurn(ctx, w.conv, tr.t); err != nil {
			w.r.fail(fmt.Errorf("suspending turn %d of %s: %w", tr.t.Index, w.conv.ID, err))
		}
	}
}

// retry runs write until the store stops refusing it as busy (another
// writer holds the conversation) or the budget is spent. It gives up its
// own claims before each wait.
func (w *turnWriter) retry(ctx context.Context, write func() error) error {
	b := w.r.busy
	p := b.policy
	p.OnRetry = func(retry.Attempt) {
		w.suspendAll(ctx)
		w.r.retried()
	}
	bctx, cancel := context.WithTimeout(ctx, b.budget)
	defer cancel()
	busy := func(err error) retry.Verdict { return retry.Verdict{Retry: errors.Is(err, store.ErrConversationBusy)} }
	return retry.Do(bctx, p, busy, func(context.Context, int) error { return write() })
}

package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
)

// txw is one write transaction. Statements are queued and sent as one
// batch (one round trip for a round of many results), each checked for its
// own error.
type txw struct {
	ctx    context.Context
	tx     pgx.Tx
	batch  pgx.Batch
	labels []string
}

// queue adds a statement to the batch; label names it in an error.
func (w *txw) queue(label, sql string, args ...any) {
	w.batch.Queue(sql, args...)
	w.labels = append(w.labels, label)
}

// queryRow sends the queued statements, then runs a query at once.
func (w *txw) queryRow(sql string, args ...any) (pgx.Row, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w.tx.QueryRow(w.ctx, sql, args...), nil
}

// exec sends the queued statements, then runs one at once and returns the
// rows it changed.
func (w *txw) exec(sql string, args ...any) (int64, error) {
	if err := w.flush(); err != nil {
		return 0, err
	}
	tag, err := w.tx.Exec(w.ctx, sql, args...)
	return tag.RowsAffected(), err
}

// flush sends the queued statements and returns the first error, named by
// its label.
func (w *txw) flush() error {
	if w.batch.Len() == 0 {
		return nil
	}
	batch, labels := w.batch, w.labels
	w.batch, w.labels = pgx.Batch{}, nil
	br := w.tx.SendBatch(w.ctx, &batch)
	var first error
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			first = fmt.Errorf("%s: %w", l, err)
			break
		}
	}
	if err := br.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// write runs fn in one transaction on conn, then stores the events
// observed since the last write in it: a round and the events that
// describe it are committed at once, and a run costs one transaction per
// transcript write instead of one per event. lockConv, when not "", is a
// conversation the transaction locks first (see convTx).
func (s *Store) write(ctx context.Context, conn *pgx.Conn, lockConv string, fn func(w *txw) error) error {
	err := s.attempt(ctx, conn, lockConv, fn, true)
	var ee *eventError
	if errors.As(err, &ee) {
		// An event that cannot be stored must not cost the transcript.
		s.events.Report(ee.err)
		return s.attempt(ctx, conn, lockConv, fn, false)
	}
	return err
}

// eventError marks a failure to store events inside a write.
type eventError struct{ err error }

func (e *eventError) Error() string { return e.err.Error() }

func (s *Store) attempt(ctx context.Context, conn *pgx.Conn, lockConv string, fn func(w *txw) error, withEvents bool) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if lockConv != "" {
		var ok bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, lockKey(lockConv)).Scan(&ok); err != nil {
			return fmt.Errorf("postgres store: locking conversation %s: %w", lockConv, err)
		}
		if !ok {
			return busy(lockConv)
		}
	}
	w := &txw{ctx: ctx, tx: tx}
	if err := fn(w); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	var events []harness.Event
	if withEvents {
		// Events are taken and inserted under emu, so their ids follow
		// the order they were observed in, whichever transaction commits
		// first.
		s.emu.Lock()
		events = s.events.Take()
		err := queueEvents(w, events)
		if err == nil {
			err = w.flush()
		}
		s.emu.Unlock()
		if err != nil {
			return &eventError{fmt.Errorf("postgres store: %w", err)}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		s.events.Requeue(events)
		return fmt.Errorf("postgres store: commit: %w", err)
	}
	return nil
}

package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store/internal/codec"
)

// txw is one write transaction. Statements are queued and sent as one
// batch, BEGIN and COMMIT included, so a round of many results costs one
// round trip to the server; each statement is checked for its own error.
type txw struct {
	ctx    context.Context
	conn   *pgx.Conn
	batch  pgx.Batch
	labels []string
}

// queue adds a statement to the batch; label names it in an error.
func (w *txw) queue(label, sql string, args ...any) {
	w.batch.Queue(sql, args...)
	w.labels = append(w.labels, label)
}

// queryRow sends the queued statements and a query, in one round trip,
// and returns the query's row, which the caller scans at once (before
// any other statement of the transaction).
func (w *txw) queryRow(sql string, args ...any) (pgx.Row, error) {
	if w.batch.Len() == 0 {
		return w.conn.QueryRow(w.ctx, sql, args...), nil
	}
	batch, labels := w.batch, w.labels
	w.batch, w.labels = pgx.Batch{}, nil
	batch.Queue(sql, args...)
	br := w.conn.SendBatch(w.ctx, &batch)
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("%s: %w", l, err)
		}
	}
	return batchRow{br: br, row: br.QueryRow()}, nil
}

// batchRow is the row of a query sent last in a batch: scanning it ends
// the batch.
type batchRow struct {
	br  pgx.BatchResults
	row pgx.Row
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// exec sends the queued statements, then runs one at once and returns the
// rows it changed.
func (w *txw) exec(sql string, args ...any) (int64, error) {
	if _, err := w.flush(); err != nil {
		return 0, err
	}
	tag, err := w.conn.Exec(w.ctx, sql, args...)
	return tag.RowsAffected(), err
}

// flush sends the queued statements and returns the first error, named by
// its label, with its index in the batch (-1 for none).
func (w *txw) flush() (int, error) {
	if w.batch.Len() == 0 {
		return -1, nil
	}
	batch, labels := w.batch, w.labels
	w.batch, w.labels = pgx.Batch{}, nil
	br := w.conn.SendBatch(w.ctx, &batch)
	at, first := -1, error(nil)
	for i, l := range labels {
		if _, err := br.Exec(); err != nil {
			at, first = i, fmt.Errorf("%s: %w", l, err)
			break
		}
	}
	if err := br.Close(); err != nil && first == nil {
		at, first = len(labels)-1, err
	}
	return at, first
}

// rollback ends a transaction that failed. A connection that cannot
// (it broke) is discarded by the pool, which checks its state on release.
func (w *txw) rollback() {
	_, _ = w.conn.Exec(context.WithoutCancel(w.ctx), "ROLLBACK")
}

// write runs fn in one transaction on conn, then stores the events
// observed since the last write in it: a round and the events that
// describe it are committed at once, and a run costs one transaction per
// transcript write instead of one per event. lockConv, when not "", is a
// conversation the transaction locks first (see turnTx).
func (s *pgStore) write(ctx context.Context, conn *pgx.Conn, lockConv string, fn func(w *txw) error) error {
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

func (s *pgStore) attempt(ctx context.Context, conn *pgx.Conn, lockConv string, fn func(w *txw) error, withEvents bool) error {
	w := &txw{ctx: ctx, conn: conn}
	w.queue("begin", "BEGIN")
	if lockConv != "" {
		row, err := w.queryRow(`SELECT pg_try_advisory_xact_lock($1)`, lockKey(lockConv))
		var ok bool
		if err == nil {
			err = row.Scan(&ok)
		}
		if err != nil {
			w.rollback()
			return fmt.Errorf("postgres store: locking conversation %s: %w", lockConv, err)
		}
		if !ok {
			w.rollback()
			return busy(lockConv)
		}
	}
	if err := fn(w); err != nil {
		w.rollback()
		return err
	}
	var (
		events     []codec.Queued
		eventsFrom = w.batch.Len()
		eventErr   error
	)
	if withEvents {
		// Events are taken and inserted under emu, so their ids follow
		// the order they were observed in, whichever transaction commits
		// first.
		s.emu.Lock()
		defer s.emu.Unlock()
		events = s.events.Take()
		eventErr = queueEvents(w, events)
	}
	if eventErr != nil {
		w.rollback()
		return &eventError{fmt.Errorf("postgres store: %w", eventErr)}
	}
	commit := w.batch.Len()
	w.queue("commit", "COMMIT")
	at, err := w.flush()
	if err == nil {
		return nil
	}
	w.rollback()
	if at >= eventsFrom && at < commit {
		return &eventError{fmt.Errorf("postgres store: %w", err)}
	}
	// The COMMIT may have reached the server and committed all the same
	// (its reply lost with the connection): the events keep their keys,
	// by which the next write skips those already stored (queueEvents).
	s.events.Requeue(events)
	return fmt.Errorf("postgres store: %w", err)
}

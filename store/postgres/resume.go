package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/rows"
)

// ResumeTurn implements store.TurnResumer: it takes the conversation's
// lock for turn on a connection of its own, as BeginTurn does (refused
// with store.ErrConversationBusy while a live session holds it: the lock of
// a process that died went with its connection), and checks that turn is
// the conversation's last stored turn, reopening it if a takeover marked it
// store.Interrupted. A turn this Store holds already is resumed on its
// connection, or, when that connection broke (the server restarted), on a
// new one under a new lock.
func (s *pgStore) ResumeTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if conv == nil || conv.ID == "" || turn == nil {
		return errors.New("postgres store: ResumeTurn needs a conversation with an id and a turn")
	}
	for attempt := 0; ; attempt++ {
		l, fresh, err := s.resumeLock(ctx, conv.ID, turn)
		if err != nil {
			return err
		}
		l.mu.Lock()
		broken := l.conn == nil || l.conn.Conn().IsClosed()
		if !broken {
			err = s.write(ctx, l.conn.Conn(), "", func(w *txw) error { return resumeTurn(w, conv.ID, turn) })
			broken = l.conn.Conn().IsClosed()
		}
		l.mu.Unlock()
		switch {
		case err == nil && !broken:
			turn.Outcome, turn.Ended = "", time.Time{}
			return nil
		case broken && !fresh && attempt == 0:
			// The turn's connection broke since it took the lock, and
			// the lock with it: take both again, once.
			s.unlockTurn(conv.ID)
			continue
		}
		if fresh || broken {
			s.unlockTurn(conv.ID)
		}
		if err == nil {
			err = fmt.Errorf("postgres store: conversation %s: the turn's connection broke", conv.ID)
		}
		return err
	}
}

// SuspendTurn implements store.TurnResumer: it unlocks the conversation
// and returns the turn's connection to the pool, leaving the turn open.
func (s *pgStore) SuspendTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if conv == nil || turn == nil {
		return errors.New("postgres store: SuspendTurn needs a conversation and a turn")
	}
	if s.turnOf(conv.ID, turn) != nil {
		s.unlockTurn(conv.ID)
	}
	return nil
}

// resumeLock returns the lock of turn's conversation for turn: the one
// this Store holds for a turn of its index (fresh false), or a new one.
func (s *pgStore) resumeLock(ctx context.Context, convID string, turn *harness.Turn) (l *turnLock, fresh bool, err error) {
	s.tmu.Lock()
	if l := s.turns[convID]; l != nil {
		defer s.tmu.Unlock()
		if l.index != turn.Index {
			return nil, false, busy(convID)
		}
		delete(l.refused, turn)
		return l, false, nil
	}
	s.tmu.Unlock()
	l, err = s.lockTurn(ctx, convID, turn)
	return l, true, err
}

// resumeTurn checks that turn is the conversation's last stored turn and
// reopens it if a takeover marked it Interrupted.
func resumeTurn(w *txw, convID string, turn *harness.Turn) error {
	row, err := w.queryRow(`SELECT idx, input, outcome FROM turns WHERE conv_id = $1 ORDER BY idx DESC LIMIT 1`, b(convID))
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	var (
		idx            int
		input, outcome string
	)
	if err := row.Scan(&idx, rows.Str{P: &input}, rows.Str{P: &outcome}); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres store: conversation %s: no turn %d to resume: %w", convID, turn.Index, store.ErrNotFound)
		}
		return fmt.Errorf("postgres store: conversation %s: %w", convID, err)
	}
	if err := codec.CheckResumable(convID, turn, idx, input, harness.Outcome(outcome)); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	if outcome == string(store.Interrupted) {
		if _, err := w.exec(`UPDATE turns SET outcome = ''::bytea, ended_ns = 0 WHERE conv_id = $1 AND idx = $2`, b(convID), idx); err != nil {
			return fmt.Errorf("postgres store: reopening turn %d of %s: %w", idx, convID, err)
		}
	}
	return nil
}

package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// turnLock is a turn in progress: the connection that holds the
// conversation's session advisory lock, through which every write of the
// turn goes (one at a time: a connection runs one transaction).
type turnLock struct {
	mu   sync.Mutex
	conn *pgxpool.Conn
	key  int64
	// index is the turn that holds the lock, known by its index (a Turn
	// of that index reloaded from the store writes as the turn), except
	// for refused: the Turns whose own BeginTurn was refused while this
	// turn ran (an agent whose BeginTurn failed still records that turn's
	// end), which must not write through it. Both are guarded by the
	// Store's tmu.
	index   int
	refused map[*harness.Turn]bool
}

// owns reports whether turn may write as the turn that holds l.
func (l *turnLock) owns(turn *harness.Turn) bool {
	return turn != nil && turn.Index == l.index && !l.refused[turn]
}

// refuse marks turn as refused while l holds the conversation.
func (l *turnLock) refuse(turn *harness.Turn) {
	if turn == nil {
		return
	}
	if l.refused == nil {
		l.refused = map[*harness.Turn]bool{}
	}
	l.refused[turn] = true
}

// release unlocks the conversation and returns the connection to the
// pool. A connection that cannot unlock (it broke) is closed, which
// releases the lock on the server as well.
func (l *turnLock) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return
	}
	var ok bool
	if err := l.conn.QueryRow(context.Background(), `SELECT pg_advisory_unlock($1)`, l.key).Scan(&ok); err != nil || !ok {
		_ = l.conn.Hijack().Close(context.Background())
	} else {
		l.conn.Release()
	}
	l.conn = nil
}

// busy is the error of a conversation another turn is writing.
func busy(convID string) error {
	return fmt.Errorf("postgres store: conversation %s: another turn is being recorded (by this or another process): %w", convID, store.ErrConversationBusy)
}

// lockTurn takes the conversation's lock for a turn on a connection of its
// own, at once or not at all.
func (s *pgStore) lockTurn(ctx context.Context, convID string, turn *harness.Turn) (*turnLock, error) {
	s.tmu.Lock()
	if held := s.turns[convID]; held != nil {
		held.refuse(turn)
		s.tmu.Unlock()
		return nil, busy(convID)
	}
	// Reserve the conversation in this process before asking the server,
	// so two turns of one process never race for one connection's lock.
	l := &turnLock{key: lockKey(convID), index: turn.Index}
	s.turns[convID] = l
	s.tmu.Unlock()
	fail := func(err error) (*turnLock, error) {
		s.tmu.Lock()
		delete(s.turns, convID)
		s.tmu.Unlock()
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fail(fmt.Errorf("postgres store: conversation %s: %w", convID, err))
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, l.key).Scan(&ok); err != nil {
		conn.Release()
		return fail(fmt.Errorf("postgres store: locking conversation %s: %w", convID, err))
	}
	if !ok {
		conn.Release()
		return fail(busy(convID))
	}
	l.conn = conn
	return l, nil
}

// unlockTurn ends the turn in progress of a conversation, if any.
func (s *pgStore) unlockTurn(convID string) {
	s.tmu.Lock()
	l := s.turns[convID]
	delete(s.turns, convID)
	s.tmu.Unlock()
	if l != nil {
		l.release()
	}
}

// turnOf returns the lock of the turn in progress of a conversation when
// turn (nil: any turn) may write through it, or nil.
func (s *pgStore) turnOf(convID string, turn *harness.Turn) *turnLock {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if l := s.turns[convID]; l != nil && (turn == nil || l.owns(turn)) {
		return l
	}
	return nil
}

// turnTx runs fn in one transaction that writes conversation convID: on
// the turn's connection when turn (nil: any turn) holds the conversation
// in this store, else on a pooled one under the conversation's
// transaction-scoped lock, refused with store.ErrConversationBusy while
// another turn holds it.
func (s *pgStore) turnTx(ctx context.Context, convID string, turn *harness.Turn, fn func(w *txw) error) error {
	if ok, err := s.heldTx(ctx, convID, turn, true, fn); ok {
		return err
	}
	return s.pooled(ctx, convID, fn)
}

// heldTx runs fn in one transaction on the turn's connection when turn
// (nil: any turn) holds conversation convID in this store, and reports
// whether it did. A write that needs no lock (needsLock false) passes over
// a connection known to be broken; one that does fails on it, since the
// lock went with it.
func (s *pgStore) heldTx(ctx context.Context, convID string, turn *harness.Turn, needsLock bool, fn func(w *txw) error) (bool, error) {
	l := s.turnOf(convID, turn)
	if l == nil {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil || (!needsLock && l.conn.Conn().IsClosed()) {
		return false, nil
	}
	return true, s.write(ctx, l.conn.Conn(), "", fn)
}

// pooled runs fn in one transaction on a pooled connection; lockConv, when
// not "", is the conversation it locks for the transaction.
func (s *pgStore) pooled(ctx context.Context, lockConv string, fn func(w *txw) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer conn.Release()
	return s.write(ctx, conn.Conn(), lockConv, fn)
}

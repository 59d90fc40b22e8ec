package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// defaultLeaseTTL is how long a turn's claim on its conversation outlives
// its last write. It is longer than any one round (a model call with its
// retries, then tools under the agent's 120 s timeout), since only writes
// renew it.
const defaultLeaseTTL = 15 * time.Minute

// leaseOwner names one Store: host, process and a random part, so that two
// Stores of one process (or a pid reused later) are different owners.
type leaseOwner struct {
	id   string
	host string
	pid  int
}

func newLeaseOwner() leaseOwner {
	host, _ := os.Hostname()
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	pid := os.Getpid()
	return leaseOwner{id: fmt.Sprintf("%s:%d:%s", host, pid, hex.EncodeToString(rnd[:])), host: host, pid: pid}
}

// claim makes this Store the conversation's writer, or fails with
// store.ErrConversationBusy. A conversation is held by the Store that
// began its running turn, in the leases table, inside the write
// transaction (which BEGIN IMMEDIATE makes exclusive across processes), so
// two writers cannot both claim it. The claim is free when nobody holds
// it, when this Store holds it, when the holder's lease expired (it wrote
// nothing for LeaseTTL), or when the holder was a process on this machine
// that no longer exists (killed in the middle of a turn). Every claim
// renews the lease; EndTurn and Close release it.
func (s *sqliteStore) claim(w *txw, convID string, now time.Time) error {
	var (
		owner, host string
		pid         int
		since, exp  int64
	)
	err := w.tx.QueryRowContext(w.ctx, `SELECT owner, host, pid, acquired_ns, expires_ns FROM leases WHERE conv_id = ?`, convID).
		Scan(&owner, &host, &pid, &since, &exp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		since = now.UnixNano()
	case err != nil:
		return fmt.Errorf("sqlite store: conversation %s: reading its lease: %w", convID, err)
	case owner == s.owner.id:
	case exp < now.UnixNano(), host == s.owner.host && !processAlive(pid):
		since = now.UnixNano()
		if err := markInterrupted(w, convID, now); err != nil {
			return err
		}
	default:
		return fmt.Errorf("sqlite store: conversation %s: %w (pid %d on %s, since %s); wait for that turn to end, or continue in another conversation",
			convID, store.ErrConversationBusy, pid, host, codec.FromNS(since).Format(time.RFC3339))
	}
	if _, err := w.exec(`INSERT INTO leases (conv_id, owner, host, pid, acquired_ns, expires_ns) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(conv_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid,
	acquired_ns = excluded.acquired_ns, expires_ns = excluded.expires_ns`,
		convID, s.owner.id, s.owner.host, s.owner.pid, since, now.Add(s.opts.LeaseTTL).UnixNano()); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: claiming it: %w", convID, err)
	}
	s.claimed.Store(true)
	return nil
}

// hold is the turn in progress of a conversation in this Store. The turn
// is known by its index, not by the *harness.Turn that began it: a writer
// that resumes the turn with another Turn of the same index (a proxy
// restarted on the same Store, which reloaded the turn, or ResumeTurn)
// records it. The exception is refused: the Turns whose own BeginTurn
// was refused while this turn ran, which carry its index but are other
// turns (an agent whose BeginTurn failed still records that turn's end).
type hold struct {
	index   int
	refused map[*harness.Turn]bool
}

// owns reports whether turn (nil: no turn) may write as the held turn.
func (h *hold) owns(turn *harness.Turn) bool {
	return turn != nil && turn.Index == h.index && !h.refused[turn]
}

// reserve makes turn this Store's turn in progress of the conversation, or
// fails with store.ErrConversationBusy while another turn of it runs in
// this Store: the lease (claim) tells Stores apart, this tells turns of
// one Store apart. BeginTurn reserves before claiming, so two goroutines
// of one Store never both begin a turn of a conversation. With resume
// (ResumeTurn), a turn of the held index is let in, even one refused
// before; fresh reports whether the reservation is new (so that a failed
// resume leaves an older one alone).
func (s *sqliteStore) reserve(convID string, turn *harness.Turn, resume bool) (fresh bool, err error) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if h := s.turns[convID]; h != nil {
		if resume && turn.Index == h.index {
			delete(h.refused, turn)
			return false, nil
		}
		if h.refused == nil {
			h.refused = map[*harness.Turn]bool{}
		}
		h.refused[turn] = true
		return false, s.busyHere(convID, h)
	}
	if s.turns == nil {
		s.turns = map[string]*hold{}
	}
	s.turns[convID] = &hold{index: turn.Index}
	return true, nil
}

// unreserve forgets turn as the conversation's turn in progress (when it
// is).
func (s *sqliteStore) unreserve(convID string, turn *harness.Turn) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if h := s.turns[convID]; h != nil && h.owns(turn) {
		delete(s.turns, convID)
	}
}

// held reports whether a turn of the conversation is in progress in this
// Store.
func (s *sqliteStore) held(convID string) bool {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	return s.turns[convID] != nil
}

// mine refuses a write on behalf of turn (nil: of no turn) while another
// turn of the conversation runs in this Store (see hold). Writes of no
// turn but a note pass only when no turn runs (deleting or saving the
// conversation under its own turn would pull it from under that turn).
func (s *sqliteStore) mine(convID string, turn *harness.Turn) error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if h := s.turns[convID]; h != nil && !h.owns(turn) {
		return s.busyHere(convID, h)
	}
	return nil
}

// busyHere is the error of a conversation another turn of this Store is
// recording.
func (s *sqliteStore) busyHere(convID string, h *hold) error {
	return fmt.Errorf("sqlite store: conversation %s: %w (turn %d, by this process: pid %d on %s); wait for that turn to end, or continue in another conversation",
		convID, store.ErrConversationBusy, h.index, s.owner.pid, s.owner.host)
}

// ResumeTurn implements store.TurnResumer: it claims the conversation for
// this Store (taking over a holder whose process is gone or whose lease
// expired, which marks its unended turn Interrupted as any takeover does)
// and, in the same transaction, reopens turn when that mark is what ended
// it. The turn must be the conversation's last, with the same input.
func (s *sqliteStore) ResumeTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if conv == nil || conv.ID == "" || turn == nil {
		return errors.New("sqlite store: ResumeTurn needs a conversation with an id and a turn")
	}
	fresh, err := s.reserve(conv.ID, turn, true)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(w *txw) error {
		if err := s.claim(w, conv.ID, time.Now()); err != nil {
			return err
		}
		return resumeTurn(w, conv.ID, turn)
	})
	if err != nil {
		if fresh {
			s.unreserve(conv.ID, turn)
		}
		return err
	}
	turn.Outcome, turn.Ended = "", time.Time{}
	return nil
}

// SuspendTurn implements store.TurnResumer: it releases this Store's lease
// on the conversation and forgets turn as its turn in progress, with the
// events observed since the last write, in one transaction.
func (s *sqliteStore) SuspendTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if conv == nil || turn == nil {
		return errors.New("sqlite store: SuspendTurn needs a conversation and a turn")
	}
	s.tmu.Lock()
	h := s.turns[conv.ID]
	s.tmu.Unlock()
	if h == nil || !h.owns(turn) {
		return nil
	}
	if err := s.write(ctx, func(w *txw) error { return s.release(w, conv.ID) }); err != nil {
		return err
	}
	s.unreserve(conv.ID, turn)
	return nil
}

// resumeTurn checks that turn is the conversation's last stored turn and
// reopens it if a takeover marked it Interrupted.
func resumeTurn(w *txw, convID string, turn *harness.Turn) error {
	var (
		idx     int
		input   string
		outcome string
	)
	err := w.tx.QueryRowContext(w.ctx, `SELECT idx, input, outcome FROM turns WHERE conv_id = ? ORDER BY idx DESC LIMIT 1`, convID).
		Scan(&idx, &input, &outcome)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlite store: conversation %s: no turn %d to resume: %w", convID, turn.Index, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("sqlite store: conversation %s: %w", convID, err)
	}
	if err := codec.CheckResumable(convID, turn, idx, input, harness.Outcome(outcome)); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	if outcome == string(store.Interrupted) {
		if _, err := w.exec(`UPDATE turns SET outcome = '', ended_ns = 0 WHERE conv_id = ? AND idx = ?`, convID, idx); err != nil {
			return fmt.Errorf("sqlite store: reopening turn %d of %s: %w", idx, convID, err)
		}
	}
	return nil
}

// markInterrupted ends the unended turns of a conversation taken over from
// a holder that is gone.
func markInterrupted(w *txw, convID string, now time.Time) error {
	if _, err := w.exec(`UPDATE turns SET outcome = ?, ended_ns = ? WHERE conv_id = ? AND outcome = ''`,
		string(store.Interrupted), now.UnixNano(), convID); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: marking the turn its last writer left: %w", convID, err)
	}
	return nil
}

// release gives up this Store's claim on the conversation.
func (s *sqliteStore) release(w *txw, convID string) error {
	if _, err := w.exec(`DELETE FROM leases WHERE conv_id = ? AND owner = ?`, convID, s.owner.id); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: releasing it: %w", convID, err)
	}
	return nil
}

// releaseOutsideTurn gives up the claim a write outside a turn took (a
// note, a save) unless a turn of this Store holds the conversation.
func (s *sqliteStore) releaseOutsideTurn(w *txw, convID string) error {
	if s.held(convID) {
		return nil
	}
	return s.release(w, convID)
}

// releaseAll gives up every claim of this Store (on Close).
func (s *sqliteStore) releaseAll() error {
	if !s.claimed.Load() {
		return nil
	}
	s.tmu.Lock()
	clear(s.turns)
	s.tmu.Unlock()
	if _, err := s.w.Exec(`DELETE FROM leases WHERE owner = ?`, s.owner.id); err != nil {
		return fmt.Errorf("sqlite store: releasing its conversations: %w", err)
	}
	return nil
}

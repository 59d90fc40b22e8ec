package sqlite

import (
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

// DefaultLeaseTTL is how long a turn's claim on its conversation outlives
// its last write. It is longer than any one round (a model call with its
// retries, then tools under the agent's 120 s timeout), since only writes
// renew it.
const DefaultLeaseTTL = 15 * time.Minute

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
func (s *Store) claim(w *txw, convID string, now time.Time) error {
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

// reserve makes turn this Store's turn in progress of the conversation, or
// fails with store.ErrConversationBusy while another turn of it runs in
// this Store: the lease (claim) tells Stores apart, this tells turns of
// one Store apart. BeginTurn reserves before claiming, so two goroutines
// of one Store never both begin a turn of a conversation.
func (s *Store) reserve(convID string, turn *harness.Turn) error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if held := s.turns[convID]; held != nil {
		if turn != nil {
			if s.refused == nil {
				s.refused = map[string]map[*harness.Turn]bool{}
			}
			if s.refused[convID] == nil {
				s.refused[convID] = map[*harness.Turn]bool{}
			}
			s.refused[convID][turn] = true
		}
		return s.busyHere(convID, held)
	}
	if s.turns == nil {
		s.turns = map[string]*harness.Turn{}
	}
	s.turns[convID] = turn
	return nil
}

// unreserve forgets turn as the conversation's turn in progress (when it
// is).
func (s *Store) unreserve(convID string, turn *harness.Turn) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if s.turns[convID] == turn {
		delete(s.turns, convID)
		delete(s.refused, convID)
	}
}

// heldBy returns the turn in progress of the conversation in this Store,
// or nil.
func (s *Store) heldBy(convID string) *harness.Turn {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	return s.turns[convID]
}

// mine refuses a write on behalf of turn (nil: of no turn) while another
// turn of the conversation runs in this Store. Writes of no turn but a
// note pass only when no turn runs (deleting or saving the conversation
// under its own turn would pull it from under that turn).
//
// The running turn is known by its index as well as by the Turn that
// began it: a writer that resumes the turn with another Turn of the same
// index (a proxy restarted on the same Store, which reloaded the turn)
// takes it over, unless that Turn's own BeginTurn was refused.
func (s *Store) mine(convID string, turn *harness.Turn) error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	held := s.turns[convID]
	switch {
	case held == nil || held == turn:
		return nil
	case turn != nil && turn.Index == held.Index && !s.refused[convID][turn]:
		s.turns[convID] = turn
		return nil
	}
	return s.busyHere(convID, held)
}

// busyHere is the error of a conversation another turn of this Store is
// recording.
func (s *Store) busyHere(convID string, held *harness.Turn) error {
	return fmt.Errorf("sqlite store: conversation %s: %w (turn %d, by this process: pid %d on %s); wait for that turn to end, or continue in another conversation",
		convID, store.ErrConversationBusy, held.Index, s.owner.pid, s.owner.host)
}

// Interrupted is the outcome stored for a turn whose writer died (or went
// silent past its lease) before ending it, set when the next writer takes
// the conversation over. Its rounds stored so far are kept; the round in
// flight was never stored, and a spill file it was writing is referenced
// by no stored cut, so spill gc collects it like any unreferenced file.
const Interrupted harness.Outcome = "interrupted"

// markInterrupted ends the unended turns of a conversation taken over from
// a holder that is gone.
func markInterrupted(w *txw, convID string, now time.Time) error {
	if _, err := w.exec(`UPDATE turns SET outcome = ?, ended_ns = ? WHERE conv_id = ? AND outcome = ''`,
		string(Interrupted), now.UnixNano(), convID); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: marking the turn its last writer left: %w", convID, err)
	}
	return nil
}

// release gives up this Store's claim on the conversation.
func (s *Store) release(w *txw, convID string) error {
	if _, err := w.exec(`DELETE FROM leases WHERE conv_id = ? AND owner = ?`, convID, s.owner.id); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: releasing it: %w", convID, err)
	}
	return nil
}

// releaseOutsideTurn gives up the claim a write outside a turn took (a
// note, a save) unless a turn of this Store holds the conversation.
func (s *Store) releaseOutsideTurn(w *txw, convID string) error {
	if s.heldBy(convID) != nil {
		return nil
	}
	return s.release(w, convID)
}

// releaseAll gives up every claim of this Store (on Close).
func (s *Store) releaseAll() error {
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

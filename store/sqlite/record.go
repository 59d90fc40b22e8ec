package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/codec"
)

// txw is one write transaction with its prepared statements, so that
// recording a round of many results (or saving a whole conversation)
// compiles each statement once.
type txw struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	chunk int // Options.ChunkBytes
}

func (w *txw) exec(query string, args ...any) (sql.Result, error) {
	st, ok := w.stmts[query]
	if !ok {
		var err error
		if st, err = w.tx.PrepareContext(w.ctx, query); err != nil {
			return nil, err
		}
		w.stmts[query] = st
	}
	return st.ExecContext(w.ctx, args...)
}

// write runs fn in one write transaction, together with the events
// observed since the last write (see Observe): a round and the events that
// describe it are committed at once, and a run costs one transaction per
// transcript write instead of one per event.
func (s *sqliteStore) write(ctx context.Context, fn func(w *txw) error) error {
	events := s.events.Take()
	err := s.tx(ctx, func(w *txw) error {
		if err := fn(w); err != nil {
			return err
		}
		if err := writeEvents(w, events); err != nil {
			return &eventError{err}
		}
		return nil
	})
	var ee *eventError
	if errors.As(err, &ee) {
		// An event that cannot be stored must not cost the transcript.
		s.events.Report(ee.err)
		return s.tx(ctx, fn)
	}
	if err != nil {
		s.events.Requeue(events)
	}
	return err
}

// eventError marks a failure to store events inside a write.
type eventError struct{ err error }

func (e *eventError) Error() string { return e.err.Error() }

// tx runs fn in one write transaction.
func (s *sqliteStore) tx(ctx context.Context, fn func(w *txw) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	w := &txw{ctx: ctx, tx: tx, stmts: map[string]*sql.Stmt{}, chunk: s.opts.ChunkBytes}
	defer func() {
		for _, st := range w.stmts {
			st.Close()
		}
	}()
	if err := fn(w); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite store: commit: %w", err)
	}
	return nil
}

// BeginTurn stores a new turn, creating the conversation on its first turn.
// A turn whose index is not the next one of the stored conversation is
// refused: the caller's conversation is stale (or not the stored one), and
// recording it would interleave two histories. So is a turn on a
// conversation another writer is running a turn on (another process, or
// another Store on this file, or another turn of this Store):
// store.ErrConversationBusy, naming the holder. The turn's writer holds the conversation until EndTurn (or
// Close); a holder that crashed is recovered at once on the same machine
// (its process is gone) and elsewhere after Options.LeaseTTL without a
// write; the turn it left unended is then stored as Interrupted.
func (s *sqliteStore) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if turn == nil {
		return errors.New("sqlite store: BeginTurn needs a turn")
	}
	if _, err := s.reserve(conv.ID, turn, false); err != nil {
		return err
	}
	err := s.write(ctx, func(w *txw) error {
		now := time.Now()
		if err := s.claim(w, conv.ID, now); err != nil {
			return err
		}
		return beginTurn(w, conv.ID, turn, now)
	})
	if err != nil {
		s.unreserve(conv.ID, turn)
	}
	return err
}

func beginTurn(w *txw, convID string, turn *harness.Turn, now time.Time) error {
	if convID == "" {
		return errors.New("sqlite store: the conversation has no id")
	}
	if _, err := w.exec(`INSERT INTO conversations (id, created_ns, updated_ns, title) VALUES (?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET updated_ns = excluded.updated_ns`, convID, now.UnixNano(), now.UnixNano(), codec.Title(turn.Input)); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: %w", convID, err)
	}
	var last int
	if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(idx), 0) FROM turns WHERE conv_id = ?`, convID).Scan(&last); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: %w", convID, err)
	}
	if turn.Index != last+1 {
		return fmt.Errorf("sqlite store: conversation %s has %d stored turn(s), so the next is %d, not %d: load the conversation from the store to continue it",
			convID, last, last+1, turn.Index)
	}
	if _, err := w.exec(`INSERT INTO turns (conv_id, idx, input, started_ns) VALUES (?, ?, ?, ?)`,
		convID, turn.Index, turn.Input, codec.NS(turn.Started)); err != nil {
		return fmt.Errorf("sqlite store: turn %d of %s: %w", turn.Index, convID, err)
	}
	for i, cm := range turn.Context {
		if _, err := w.exec(`INSERT INTO turn_context (conv_id, turn, seq, after_input, text) VALUES (?, ?, ?, ?, ?)`,
			convID, turn.Index, i+1, boolInt(cm.AfterInput), cm.Text); err != nil {
			return fmt.Errorf("sqlite store: context message %d of turn %d of %s: %w", i+1, turn.Index, convID, err)
		}
	}
	return nil
}

// AddRound stores a complete round: its assistant message and calls,
// every result with its full payload, its model copy and its cuts, and
// the system prompt and tool schemas of the request that produced it
// (from AddRequest), in one transaction.
func (s *sqliteStore) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	req := s.requests.Take(conv.ID, turn.Index, round.Index)
	if err := s.mine(conv.ID, turn); err != nil {
		return err
	}
	return s.write(ctx, func(w *txw) error {
		now := time.Now()
		if err := s.claim(w, conv.ID, now); err != nil {
			return err
		}
		if err := addRound(w, conv.ID, turn.Index, round, req); err != nil {
			return err
		}
		return touch(w, conv.ID, now)
	})
}

func touch(w *txw, convID string, now time.Time) error {
	if _, err := w.exec(`UPDATE conversations SET updated_ns = ? WHERE id = ?`, now.UnixNano(), convID); err != nil {
		return fmt.Errorf("sqlite store: conversation %s: %w", convID, err)
	}
	return nil
}

// addRound stores round r; req, when not nil, is the request that
// produced it.
func addRound(w *txw, convID string, turn int, r *harness.Round, req *codec.Request) error {
	where := fmt.Sprintf("turn %d round %d of %s", turn, r.Index, convID)
	u, st := r.Usage, r.Stats
	var recorded, system, tools = 0, "", ""
	if req != nil {
		if err := writeRequest(w, req); err != nil {
			return fmt.Errorf("sqlite store: %s: request: %w", where, err)
		}
		recorded, system, tools = 1, req.SystemHash, req.SetHash
	}
	if _, err := w.exec(`INSERT INTO rounds (conv_id, turn, idx, final, input_tokens, cached_tokens, cache_write_tokens, output_tokens,
	req_messages, req_evidence_chars, req_tools, req_tool_bytes, req_recorded, req_system, req_tool_set, answered_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, r.Index, boolInt(r.Final), u.Input, u.Cached, u.CacheWrite, u.Output,
		st.Messages, st.EvidenceChars, st.Tools, st.ToolBytes, recorded, system, tools, codec.NS(r.Answered)); err != nil {
		return fmt.Errorf("sqlite store: %s: %w", where, err)
	}
	m := r.Assistant
	parts, err := codec.EncodePartsJSON(m.Parts)
	if err != nil {
		return fmt.Errorf("sqlite store: %s: assistant message: %w", where, err)
	}
	if _, err := w.exec(`INSERT INTO messages (conv_id, turn, round, role, parts, tool_call_id, tool_name, is_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, r.Index, string(m.Role), parts, m.ToolCallID, m.ToolName, boolInt(m.IsError)); err != nil {
		return fmt.Errorf("sqlite store: %s: assistant message: %w", where, err)
	}
	for dropped, calls := range [][]harness.ToolCall{m.ToolCalls, r.Dropped} {
		for i, c := range calls {
			if _, err := w.exec(`INSERT INTO tool_calls (conv_id, turn, round, dropped, seq, call_id, name, args) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				convID, turn, r.Index, dropped, i+1, c.ID, c.Name, []byte(c.Args)); err != nil {
				return fmt.Errorf("sqlite store: %s: call %s: %w", where, c.ID, err)
			}
		}
	}
	for i, res := range r.Results {
		if err := addResult(w, convID, turn, r.Index, i+1, res); err != nil {
			return fmt.Errorf("sqlite store: %s: result %s: %w", where, res.CallID, err)
		}
	}
	return nil
}

func addResult(w *txw, convID string, turn, round, seq int, res *harness.ToolResult) error {
	row, err := codec.EncodeResult(res)
	if err != nil {
		return err
	}
	if _, err := w.exec(`INSERT INTO results (conv_id, turn, round, seq, call_id, tool, is_error, timed_out, bytes, full_chars,
	model_bytes, model_chars, model_text, model, meta, marker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, round, seq, row.CallID, row.Tool, boolInt(row.IsError), boolInt(row.TimedOut), row.Bytes, row.FullChars,
		row.ModelBytes, row.ModelChars, sql.NullString{String: row.ModelText, Valid: row.ModelIsText}, row.ModelJSON, row.Meta, row.Marker); err != nil {
		return err
	}
	// A payload too large for one value is stored in chunks after the row
	// that names it.
	text := sql.NullString{String: row.Text, Valid: row.TextIsText}
	parts := row.PartsJSON
	var chunked, payload string
	switch {
	case text.Valid && len(text.String) > w.chunk:
		chunked, payload, text = chunkedText, text.String, sql.NullString{}
	case len(parts) > w.chunk:
		chunked, payload, parts = chunkedParts, string(parts), nil
	}
	if _, err := w.exec(`INSERT INTO result_bodies (conv_id, turn, round, seq, text, parts, structured, chunked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, round, seq, text, parts, row.Structured, chunked); err != nil {
		return err
	}
	if chunked != "" {
		if err := writeChunks(w, convID, turn, round, seq, payload, w.chunk); err != nil {
			return err
		}
	}
	for n, c := range res.Cuts {
		refs, valid, err := codec.EncodeRefs(c.Refs)
		if err != nil {
			return fmt.Errorf("cut %d: %w", n+1, err)
		}
		if _, err := w.exec(`INSERT INTO cuts (conv_id, turn, round, seq, n, kind, by, bytes_in, bytes_out, locator, of, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			convID, turn, round, seq, n+1, string(c.Kind), c.By, c.BytesIn, c.BytesOut, c.Locator, c.Of, sql.NullString{String: refs, Valid: valid}); err != nil {
			return err
		}
	}
	return nil
}

// EndTurn stores the turn's outcome, end time and usage, and forgets any
// request of the turn that produced no round (its model call failed).
func (s *sqliteStore) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	s.requests.Drop(conv.ID, turn.Index)
	if err := s.mine(conv.ID, turn); err != nil {
		return err
	}
	defer s.unreserve(conv.ID, turn)
	return s.write(ctx, func(w *txw) error {
		if err := s.claim(w, conv.ID, time.Now()); err != nil {
			return err
		}
		if err := endTurn(w, conv.ID, turn); err != nil {
			return err
		}
		if err := touch(w, conv.ID, time.Now()); err != nil {
			return err
		}
		return s.release(w, conv.ID)
	})
}

func endTurn(w *txw, convID string, turn *harness.Turn) error {
	u := turn.Usage
	res, err := w.exec(`UPDATE turns SET outcome = ?, ended_ns = ?, input_tokens = ?, cached_tokens = ?, cache_write_tokens = ?, output_tokens = ?
WHERE conv_id = ? AND idx = ? AND outcome = '' AND ended_ns = 0`, string(turn.Outcome), codec.NS(turn.Ended), u.Input, u.Cached, u.CacheWrite, u.Output, convID, turn.Index)
	if err != nil {
		return fmt.Errorf("sqlite store: end of turn %d of %s: %w", turn.Index, convID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("sqlite store: end of turn %d of %s: the turn was never begun, or has ended", turn.Index, convID)
	}
	return nil
}

// AddNote stores a note (a compaction summary); the turns it stands for
// stay in the store. A turn of this Store may add notes to its
// conversation (compaction runs inside a turn); a turn of another Store
// refuses it with store.ErrConversationBusy.
func (s *sqliteStore) AddNote(ctx context.Context, conv *harness.Conversation, note *harness.Note) error {
	return s.write(ctx, func(w *txw) error {
		now := time.Now()
		if _, err := w.exec(`INSERT INTO conversations (id, created_ns, updated_ns) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING`,
			conv.ID, now.UnixNano(), now.UnixNano()); err != nil {
			return fmt.Errorf("sqlite store: conversation %s: %w", conv.ID, err)
		}
		if err := s.claim(w, conv.ID, now); err != nil {
			return err
		}
		if err := addNote(w, conv.ID, note); err != nil {
			return err
		}
		if err := touch(w, conv.ID, now); err != nil {
			return err
		}
		return s.releaseOutsideTurn(w, conv.ID)
	})
}

func addNote(w *txw, convID string, note *harness.Note) error {
	if _, err := w.exec(`INSERT INTO notes (conv_id, seq, after, text, by, clear_turn, clear_round)
VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM notes WHERE conv_id = ?), ?, ?, ?, ?, ?)`,
		convID, convID, note.After, note.Text, note.By, note.ClearTurn, note.ClearRound); err != nil {
		return fmt.Errorf("sqlite store: note of %s: %w", convID, err)
	}
	return nil
}

// Save stores a whole conversation that is not in the store yet (an
// import, a replay, a fixture) in one transaction. A conversation loaded
// without its full payloads (see store.Partial) is refused: saving it would
// store model copies as if they were what the tools returned.
func (s *sqliteStore) Save(ctx context.Context, conv *harness.Conversation) error {
	if err := codec.CheckSavable(conv); err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	if err := s.mine(conv.ID, nil); err != nil {
		return err
	}
	return s.write(ctx, func(w *txw) error {
		now := time.Now()
		// A conversation another writer is recording is busy rather than
		// already stored: its writer may yet delete it.
		if err := s.claim(w, conv.ID, now); err != nil {
			return err
		}
		var n int
		if err := w.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, conv.ID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("sqlite store: conversation %s is already stored", conv.ID)
		}
		for _, t := range conv.Turns {
			if err := beginTurn(w, conv.ID, t, now); err != nil {
				return err
			}
			for _, r := range t.Rounds {
				if err := addRound(w, conv.ID, t.Index, r, nil); err != nil {
					return err
				}
			}
			if err := endTurn(w, conv.ID, t); err != nil {
				return err
			}
		}
		if len(conv.Turns) == 0 {
			if _, err := w.exec(`INSERT INTO conversations (id, created_ns, updated_ns) VALUES (?, ?, ?)`, conv.ID, now.UnixNano(), now.UnixNano()); err != nil {
				return fmt.Errorf("sqlite store: conversation %s: %w", conv.ID, err)
			}
		}
		for _, note := range conv.Notes {
			if err := addNote(w, conv.ID, note); err != nil {
				return err
			}
		}
		if len(conv.Turns) > 0 && !conv.Turns[0].Started.IsZero() {
			if _, err := w.exec(`UPDATE conversations SET created_ns = ? WHERE id = ?`, conv.Turns[0].Started.UnixNano(), conv.ID); err != nil {
				return fmt.Errorf("sqlite store: conversation %s: %w", conv.ID, err)
			}
		}
		return s.release(w, conv.ID)
	})
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// BeginTurn takes the conversation's lock for the turn (see the package
// documentation) and stores the new turn, creating the conversation on its
// first turn. Another turn of the conversation in progress, here or in
// another process, refuses it at once with store.ErrConversationBusy. A
// turn whose index is not the next one of the stored conversation is
// refused too: the caller's conversation is stale (another process added
// a turn since it was loaded), and recording it would interleave two
// histories.
func (s *pgStore) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if conv.ID == "" {
		return errors.New("postgres store: the conversation has no id")
	}
	if turn == nil {
		return errors.New("postgres store: BeginTurn needs a turn")
	}
	l, err := s.lockTurn(ctx, conv.ID, turn)
	if err != nil {
		return err
	}
	l.mu.Lock()
	err = s.write(ctx, l.conn.Conn(), "", func(w *txw) error { return beginTurn(w, conv.ID, turn, time.Now()) })
	l.mu.Unlock()
	if err != nil {
		s.unlockTurn(conv.ID)
	}
	return err
}

func beginTurn(w *txw, convID string, turn *harness.Turn, now time.Time) error {
	w.queue("conversation "+convID, `INSERT INTO conversations (id, created_ns, updated_ns, title) VALUES ($1, $2, $2, $3)
ON CONFLICT (id) DO UPDATE SET updated_ns = excluded.updated_ns`, b(convID), now.UnixNano(), b(codec.Title(turn.Input)))
	row, err := w.queryRow(`SELECT COALESCE(MAX(idx), 0) FROM turns WHERE conv_id = $1`, b(convID))
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	var last int
	if err := row.Scan(&last); err != nil {
		return fmt.Errorf("postgres store: conversation %s: %w", convID, err)
	}
	if turn.Index != last+1 {
		return fmt.Errorf("postgres store: conversation %s has %d stored turn(s), so the next is %d, not %d: load the conversation from the store to continue it",
			convID, last, last+1, turn.Index)
	}
	w.queue(fmt.Sprintf("turn %d of %s", turn.Index, convID), `INSERT INTO turns (conv_id, idx, input, started_ns) VALUES ($1, $2, $3, $4)`,
		b(convID), turn.Index, b(turn.Input), codec.NS(turn.Started))
	addContext(w, convID, turn)
	return nil
}

// addContext queues the rows of turn's context messages.
func addContext(w *txw, convID string, turn *harness.Turn) {
	for i, cm := range turn.Context {
		w.queue(fmt.Sprintf("context message %d of turn %d of %s", i+1, turn.Index, convID),
			`INSERT INTO turn_context (conv_id, turn, seq, after_input, text) VALUES ($1, $2, $3, $4, $5)`,
			b(convID), turn.Index, i+1, cm.AfterInput, b(cm.Text))
	}
}

// AddRound stores a complete round: its assistant message and calls,
// every result with its full payload, its model copy and its cuts, in
// one transaction sent as one batch. The request that produced it is
// stored apart (AddRequest), before or after it.
func (s *pgStore) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	return s.turnTx(ctx, conv.ID, turn, func(w *txw) error {
		if err := addRound(w, conv.ID, turn.Index, round); err != nil {
			return err
		}
		touch(w, conv.ID, time.Now())
		return nil
	})
}

func touch(w *txw, convID string, now time.Time) {
	w.queue("conversation "+convID, `UPDATE conversations SET updated_ns = $1 WHERE id = $2`, now.UnixNano(), b(convID))
}

// addRound queues round r. Its request is not part of it: the rows of
// round_requests hold requests (see AddRequest).
func addRound(w *txw, convID string, turn int, r *harness.Round) error {
	where := fmt.Sprintf("turn %d round %d of %s", turn, r.Index, convID)
	u, st := r.Usage, r.Stats
	w.queue(where, `INSERT INTO rounds (conv_id, turn, idx, final, input_tokens, cached_tokens, cache_write_tokens, output_tokens,
	req_messages, req_evidence_chars, req_tools, req_tool_bytes, answered_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		b(convID), turn, r.Index, r.Final, u.Input, u.Cached, u.CacheWrite, u.Output,
		st.Messages, st.EvidenceChars, st.Tools, st.ToolBytes, codec.NS(r.Answered))
	m := r.Assistant
	parts, err := codec.EncodePartsJSON(m.Parts)
	if err != nil {
		return fmt.Errorf("postgres store: %s: assistant message: %w", where, err)
	}
	w.queue(where+": assistant message", `INSERT INTO messages (conv_id, turn, round, role, parts, tool_call_id, tool_name, is_error)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		b(convID), turn, r.Index, b(string(m.Role)), parts, b(m.ToolCallID), b(m.ToolName), m.IsError)
	for dropped, calls := range [][]harness.ToolCall{m.ToolCalls, r.Dropped} {
		for i, c := range calls {
			w.queue(where+": call "+c.ID, `INSERT INTO tool_calls (conv_id, turn, round, dropped, seq, call_id, name, args) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				b(convID), turn, r.Index, dropped == 1, i+1, b(c.ID), b(c.Name), nullBytes(c.Args))
		}
	}
	for i, res := range r.Results {
		if err := addResult(w, where, convID, turn, r.Index, i+1, res); err != nil {
			return fmt.Errorf("postgres store: %s: %w", where, err)
		}
	}
	return nil
}

func addResult(w *txw, where, convID string, turn, round, seq int, res *harness.ToolResult) error {
	row, err := codec.EncodeResult(res)
	if err != nil {
		return err
	}
	where += ": result " + res.CallID
	w.queue(where, `INSERT INTO results (conv_id, turn, round, seq, call_id, tool, is_error, timed_out, bytes, full_chars,
	model_bytes, model_chars, model_text, model, meta, marker) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		b(convID), turn, round, seq, b(row.CallID), b(row.Tool), row.IsError, row.TimedOut, row.Bytes, row.FullChars,
		row.ModelBytes, row.ModelChars, textOrNull(row.ModelText, row.ModelIsText), row.ModelJSON, row.Meta, b(row.Marker))
	w.queue(where, `INSERT INTO result_bodies (conv_id, turn, round, seq, text, parts, structured) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		b(convID), turn, round, seq, textOrNull(row.Text, row.TextIsText), row.PartsJSON, row.Structured)
	for n, c := range res.Cuts {
		refs, valid, err := codec.EncodeRefs(c.Refs)
		if err != nil {
			return fmt.Errorf("result %s: cut %d: %w", res.CallID, n+1, err)
		}
		var col *string
		if valid {
			col = &refs
		}
		w.queue(where, `INSERT INTO cuts (conv_id, turn, round, seq, n, kind, by, bytes_in, bytes_out, locator, of, refs)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			b(convID), turn, round, seq, n+1, b(string(c.Kind)), b(c.By), c.BytesIn, c.BytesOut, b(c.Locator), b(c.Of), col)
	}
	return nil
}

// textOrNull is text as bytea when valid, else NULL.
func textOrNull(text string, valid bool) []byte {
	if !valid {
		return nil
	}
	return b(text)
}

// nullBytes keeps nil as NULL and anything else (empty too) as it is.
func nullBytes(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append(make([]byte, 0, len(v)), v...)
}

// EndTurn stores the turn's outcome, end time and usage, removes any
// request of the turn that produced no round (its model call failed), and
// releases the conversation's lock. A turn that has ended already, or was
// never begun, is refused.
func (s *pgStore) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	err := s.turnTx(ctx, conv.ID, turn, func(w *txw) error {
		if err := endTurn(w, conv.ID, turn); err != nil {
			return err
		}
		touch(w, conv.ID, time.Now())
		return nil
	})
	if s.turnOf(conv.ID, turn) != nil {
		s.unlockTurn(conv.ID)
	}
	return err
}

func endTurn(w *txw, convID string, turn *harness.Turn) error {
	u := turn.Usage
	// Only a turn without an outcome: a caller whose BeginTurn was
	// refused must not overwrite the stored turn of the same index.
	n, err := w.exec(`UPDATE turns SET outcome = $1, ended_ns = $2, input_tokens = $3, cached_tokens = $4, cache_write_tokens = $5, output_tokens = $6
WHERE conv_id = $7 AND idx = $8 AND outcome = ''::bytea AND ended_ns = 0`, b(string(turn.Outcome)), codec.NS(turn.Ended), u.Input, u.Cached, u.CacheWrite, u.Output, b(convID), turn.Index)
	if err != nil {
		return fmt.Errorf("postgres store: end of turn %d of %s: %w", turn.Index, convID, err)
	}
	if n == 0 {
		return fmt.Errorf("postgres store: end of turn %d of %s: the turn was never begun, or has ended", turn.Index, convID)
	}
	if turn.Outcome != store.Interrupted {
		// The turn takes no more rounds (an interrupted one may be
		// reopened, and take the rounds of the requests it made).
		w.queue(fmt.Sprintf("requests of turn %d of %s", turn.Index, convID), `DELETE FROM round_requests q WHERE q.conv_id = $1 AND q.turn = $2
AND NOT EXISTS (SELECT 1 FROM rounds r WHERE r.conv_id = q.conv_id AND r.turn = q.turn AND r.idx = q.round)`, b(convID), turn.Index)
	}
	return nil
}

// AddNote stores a note (a compaction summary); the turns it stands for
// stay in the store. During a turn of the conversation in this store, the
// note is part of it; while a turn elsewhere holds the conversation, it is
// refused with store.ErrConversationBusy.
func (s *pgStore) AddNote(ctx context.Context, conv *harness.Conversation, note *harness.Note) error {
	return s.turnTx(ctx, conv.ID, nil, func(w *txw) error {
		now := time.Now()
		w.queue("conversation "+conv.ID, `INSERT INTO conversations (id, created_ns, updated_ns) VALUES ($1, $2, $2) ON CONFLICT (id) DO NOTHING`,
			b(conv.ID), now.UnixNano())
		addNote(w, conv.ID, note)
		touch(w, conv.ID, now)
		return nil
	})
}

func addNote(w *txw, convID string, note *harness.Note) {
	w.queue("note of "+convID, `INSERT INTO notes (conv_id, seq, after, text, by, clear_turn, clear_round)
VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM notes WHERE conv_id = $1), $2, $3, $4, $5, $6)`,
		b(convID), note.After, b(note.Text), b(note.By), note.ClearTurn, note.ClearRound)
}

// Save stores a whole conversation that is not in the store yet (an
// import, a replay, a fixture) in one transaction. A conversation loaded
// without its full payloads (see store.Partial) is refused: saving it would
// store model copies as if they were what the tools returned.
func (s *pgStore) Save(ctx context.Context, conv *harness.Conversation) error {
	if err := codec.CheckSavable(conv); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return s.pooled(ctx, conv.ID, func(w *txw) error {
		row, err := w.queryRow(`SELECT COUNT(*) FROM conversations WHERE id = $1`, b(conv.ID))
		if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		var n int
		if err := row.Scan(&n); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("postgres store: conversation %s is already stored", conv.ID)
		}
		// Requests stored for the id before (AddRequest writes them
		// apart from rounds) are not this conversation's.
		w.queue("conversation "+conv.ID, `DELETE FROM round_requests WHERE conv_id = $1`, b(conv.ID))
		now := time.Now()
		created := now.UnixNano()
		if len(conv.Turns) > 0 && !conv.Turns[0].Started.IsZero() {
			created = conv.Turns[0].Started.UnixNano()
		}
		title := ""
		if len(conv.Turns) > 0 {
			title = codec.Title(conv.Turns[0].Input)
		}
		w.queue("conversation "+conv.ID, `INSERT INTO conversations (id, created_ns, updated_ns, title) VALUES ($1, $2, $3, $4)`,
			b(conv.ID), created, now.UnixNano(), b(title))
		for _, t := range conv.Turns {
			w.queue(fmt.Sprintf("turn %d of %s", t.Index, conv.ID), `INSERT INTO turns (conv_id, idx, input, started_ns, outcome, ended_ns,
	input_tokens, cached_tokens, cache_write_tokens, output_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
				b(conv.ID), t.Index, b(t.Input), codec.NS(t.Started), b(string(t.Outcome)), codec.NS(t.Ended),
				t.Usage.Input, t.Usage.Cached, t.Usage.CacheWrite, t.Usage.Output)
			addContext(w, conv.ID, t)
			for _, r := range t.Rounds {
				if err := addRound(w, conv.ID, t.Index, r); err != nil {
					return err
				}
			}
		}
		for _, note := range conv.Notes {
			addNote(w, conv.ID, note)
		}
		return nil
	})
}

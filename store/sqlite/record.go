package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
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
func (s *Store) write(ctx context.Context, fn func(w *txw) error) error {
	events := s.takePending()
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
		s.reportEventErr(ee.err)
		return s.tx(ctx, fn)
	}
	if err != nil {
		s.requeue(events)
	}
	return err
}

// eventError marks a failure to store events inside a write.
type eventError struct{ err error }

func (e *eventError) Error() string { return e.err.Error() }

// tx runs fn in one write transaction.
func (s *Store) tx(ctx context.Context, fn func(w *txw) error) error {
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
// another Store on this file): store.ErrConversationBusy, naming the
// holder. The turn's writer holds the conversation until EndTurn (or
// Close); a holder that crashed is recovered at once on the same machine
// (its process is gone) and elsewhere after Options.LeaseTTL without a
// write; the turn it left unended is then stored as Interrupted.
func (s *Store) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	return s.write(ctx, func(w *txw) error {
		now := time.Now()
		if err := s.claim(w, conv.ID, now); err != nil {
			return err
		}
		return beginTurn(w, conv.ID, turn, now)
	})
}

func beginTurn(w *txw, convID string, turn *harness.Turn, now time.Time) error {
	if convID == "" {
		return errors.New("sqlite store: the conversation has no id")
	}
	if _, err := w.exec(`INSERT INTO conversations (id, created_ns, updated_ns, title) VALUES (?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET updated_ns = excluded.updated_ns`, convID, now.UnixNano(), now.UnixNano(), title(turn.Input)); err != nil {
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
		convID, turn.Index, turn.Input, ns(turn.Started)); err != nil {
		return fmt.Errorf("sqlite store: turn %d of %s: %w", turn.Index, convID, err)
	}
	return nil
}

// title is the first line of a turn's input, at most 80 characters.
func title(input string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(input), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > 80 {
		line = string([]rune(line)[:79]) + "…"
	}
	return line
}

// AddRound stores a complete round: its assistant message and calls,
// every result with its full payload, its model copy and its cuts, and
// the system prompt and tool schemas of the request that produced it
// (from AddRequest), in one transaction.
func (s *Store) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	req := s.takeRequest(conv.ID, turn.Index, round.Index)
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
func addRound(w *txw, convID string, turn int, r *harness.Round, req *pendingRequest) error {
	where := fmt.Sprintf("turn %d round %d of %s", turn, r.Index, convID)
	u, st := r.Usage, r.Stats
	var recorded, system, tools = 0, "", ""
	if req != nil {
		if err := writeRequest(w, req); err != nil {
			return fmt.Errorf("sqlite store: %s: request: %w", where, err)
		}
		recorded, system, tools = 1, req.systemHash, req.setHash
	}
	if _, err := w.exec(`INSERT INTO rounds (conv_id, turn, idx, final, input_tokens, cached_tokens, cache_write_tokens, output_tokens,
	req_messages, req_evidence_chars, req_tools, req_tool_bytes, req_recorded, req_system, req_tool_set) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, r.Index, boolInt(r.Final), u.Input, u.Cached, u.CacheWrite, u.Output,
		st.Messages, st.EvidenceChars, st.Tools, st.ToolBytes, recorded, system, tools); err != nil {
		return fmt.Errorf("sqlite store: %s: %w", where, err)
	}
	m := r.Assistant
	parts, err := encodePartsJSON(m.Parts)
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
	if res == nil {
		return errors.New("nil result")
	}
	bytes := res.Bytes
	if bytes == 0 {
		bytes = res.PayloadSize()
	}
	fullParts := res.FullParts()
	full := harness.PartsText(fullParts)
	fullChars := harness.Chars(full)
	var (
		modelText, text sql.NullString
		model, parts    []byte
		meta            []byte
		modelBytes      = sizeOf(fullParts)
		modelChars      = fullChars
		marker          string
		err             error
	)
	if res.Model != nil {
		if modelText, model, err = encodeParts(res.Model); err != nil {
			return fmt.Errorf("model copy: %w", err)
		}
		mt := harness.PartsText(res.Model)
		modelBytes, modelChars = sizeOf(res.Model), harness.Chars(mt)
		marker = markerOf(full, mt)
	}
	if text, parts, err = encodeParts(res.Parts); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	if len(res.Meta) > 0 {
		meta = encodeMeta(res.Meta)
	}
	if _, err := w.exec(`INSERT INTO results (conv_id, turn, round, seq, call_id, tool, is_error, timed_out, bytes, full_chars,
	model_bytes, model_chars, model_text, model, meta, marker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, round, seq, res.CallID, res.Tool, boolInt(res.IsError), boolInt(res.TimedOut), bytes, fullChars,
		modelBytes, modelChars, modelText, model, meta, marker); err != nil {
		return err
	}
	var structured []byte
	if len(res.Structured) > 0 {
		structured = []byte(res.Structured)
	}
	// A payload too large for one value is stored in chunks after the row
	// that names it.
	var chunked, payload string
	switch {
	case text.Valid && len(text.String) > w.chunk:
		chunked, payload, text = chunkedText, text.String, sql.NullString{}
	case len(parts) > w.chunk:
		chunked, payload, parts = chunkedParts, string(parts), nil
	}
	if _, err := w.exec(`INSERT INTO result_bodies (conv_id, turn, round, seq, text, parts, structured, chunked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		convID, turn, round, seq, text, parts, structured, chunked); err != nil {
		return err
	}
	if chunked != "" {
		if err := writeChunks(w, convID, turn, round, seq, payload, w.chunk); err != nil {
			return err
		}
	}
	for n, c := range res.Cuts {
		refs, err := encodeRefs(c.Refs)
		if err != nil {
			return fmt.Errorf("cut %d: %w", n+1, err)
		}
		if _, err := w.exec(`INSERT INTO cuts (conv_id, turn, round, seq, n, kind, by, bytes_in, bytes_out, locator, of, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			convID, turn, round, seq, n+1, string(c.Kind), c.By, c.BytesIn, c.BytesOut, c.Locator, c.Of, refs); err != nil {
			return err
		}
	}
	return nil
}

func sizeOf(parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		n += p.Size()
	}
	return n
}

// maxMarker bounds the marker kept for logs.
const maxMarker = 600

// markerElision joins the head and tail of a marker longer than maxMarker.
const markerElision = " … "

// markerOf returns what the model copy adds to the full payload: a guard's
// copy is head + marker + tail of the payload (or a replacement), so the
// part of model between its longest common prefix and suffix with full is
// the marker. It runs in time linear in the model copy.
func markerOf(full, model string) string {
	if model == full {
		return ""
	}
	p := 0
	for p < len(model) && p < len(full) && model[p] == full[p] {
		p++
	}
	for p > 0 && p < len(model) && !utf8.RuneStart(model[p]) {
		p--
	}
	q := 0
	for q < len(model)-p && q < len(full)-p && model[len(model)-1-q] == full[len(full)-1-q] {
		q++
	}
	for q > 0 && len(model)-q < len(model) && !utf8.RuneStart(model[len(model)-q]) {
		q--
	}
	m := strings.TrimSpace(model[p : len(model)-q])
	if len(m) > maxMarker {
		// Cut at character boundaries, moving at most UTFMax-1 bytes: a
		// copy holding invalid UTF-8 keeps its bytes (trimming until the
		// half was valid used to shrink it to almost nothing).
		h := maxMarker / 2
		for i := 1; i < utf8.UTFMax && !utf8.RuneStart(m[h]); i++ {
			h--
		}
		t := len(m) - maxMarker/2
		for i := 1; i < utf8.UTFMax && !utf8.RuneStart(m[t]); i++ {
			t++
		}
		m = m[:h] + markerElision + m[t:]
	}
	return m
}

// EndTurn stores the turn's outcome, end time and usage, and forgets any
// request of the turn that produced no round (its model call failed).
func (s *Store) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	s.dropRequests(conv.ID, turn.Index)
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
WHERE conv_id = ? AND idx = ?`, string(turn.Outcome), ns(turn.Ended), u.Input, u.Cached, u.CacheWrite, u.Output, convID, turn.Index)
	if err != nil {
		return fmt.Errorf("sqlite store: end of turn %d of %s: %w", turn.Index, convID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("sqlite store: end of turn %d of %s: the turn was never begun", turn.Index, convID)
	}
	return nil
}

// AddNote stores a note (a compaction summary); the turns it stands for
// stay in the store.
func (s *Store) AddNote(ctx context.Context, conv *harness.Conversation, note *harness.Note) error {
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
		return touch(w, conv.ID, now)
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
func (s *Store) Save(ctx context.Context, conv *harness.Conversation) error {
	if conv == nil || conv.ID == "" {
		return errors.New("sqlite store: Save needs a conversation with an id")
	}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				if store.Partial(res) {
					return fmt.Errorf("sqlite store: result %s of turn %d was loaded without its full payload; save a conversation from LoadFull", res.CallID, t.Index)
				}
			}
		}
	}
	return s.write(ctx, func(w *txw) error {
		var n int
		if err := w.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, conv.ID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite store: %w", err)
		}
		if n > 0 {
			return fmt.Errorf("sqlite store: conversation %s is already stored", conv.ID)
		}
		now := time.Now()
		for i, t := range conv.Turns {
			if t.Index != i+1 {
				return fmt.Errorf("sqlite store: conversation %s: turn %d has index %d", conv.ID, i+1, t.Index)
			}
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
		return nil
	})
}

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// Load returns a stored conversation, ready for Agent.Run to continue it.
// The full payload of a result a guard cut stays in the store: the result
// comes back with its model copy, cuts, sizes and metadata, and Parts and
// Structured nil (store.Partial reports it; FullResult or store.Full fetch
// the rest). Views only use the model copy, so resuming costs the same
// whatever the size of the payloads.
func (s *Store) Load(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, false)
}

// LoadFull returns a stored conversation with every full payload.
func (s *Store) LoadFull(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, true)
}

type resultKey struct{ turn, round, seq int }

func (s *Store) load(ctx context.Context, id string, full bool) (*harness.Conversation, error) {
	// One read transaction: a consistent snapshot even while a run on the
	// same file is writing.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	conv, err := loadTx(ctx, tx, id, full)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: loading %s: %w", id, err)
	}
	return conv, nil
}

// loaded is a conversation being loaded: the codec's loader, which files
// each row under its parent, filled in by one query per table.
type loaded struct{ *codec.Loader }

// loadTx reads conversation id in one read transaction, table by table.
func loadTx(ctx context.Context, tx *sql.Tx, id string, full bool) (*harness.Conversation, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, id).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("conversation %q: %w", id, store.ErrNotFound)
	}
	l := loaded{codec.NewLoader(id)}
	for _, step := range []struct {
		what string
		fn   func(context.Context, *sql.Tx, string, bool) error
	}{{"turns", l.loadTurns}, {"rounds", l.loadRounds}, {"tool calls", l.loadCalls},
		{"results", l.loadResults}, {"cuts", l.loadCuts}, {"notes", l.loadNotes}} {
		if err := step.fn(ctx, tx, id, full); err != nil {
			return nil, fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return l.Conv, nil
}

func (l loaded) loadTurns(ctx context.Context, tx *sql.Tx, id string, _ bool) error {
	return query(ctx, tx, `SELECT idx, input, outcome, started_ns, ended_ns, input_tokens, cached_tokens, cache_write_tokens, output_tokens
FROM turns WHERE conv_id = ? ORDER BY idx`, []any{id}, func(rows *sql.Rows) error {
		t := &harness.Turn{}
		var started, ended int64
		if err := rows.Scan(&t.Index, &t.Input, &t.Outcome, &started, &ended,
			&t.Usage.Input, &t.Usage.Cached, &t.Usage.CacheWrite, &t.Usage.Output); err != nil {
			return err
		}
		t.Started, t.Ended = codec.FromNS(started), codec.FromNS(ended)
		l.Turn(t)
		return nil
	})
}

func (l loaded) loadRounds(ctx context.Context, tx *sql.Tx, id string, _ bool) error {
	return query(ctx, tx, `SELECT r.turn, r.idx, r.final, r.input_tokens, r.cached_tokens, r.cache_write_tokens, r.output_tokens,
	r.req_messages, r.req_evidence_chars, r.req_tools, r.req_tool_bytes,
	m.role, m.parts, m.tool_call_id, m.tool_name, m.is_error
FROM rounds r LEFT JOIN messages m ON m.conv_id = r.conv_id AND m.turn = r.turn AND m.round = r.idx
WHERE r.conv_id = ? ORDER BY r.turn, r.idx`, []any{id}, func(rows *sql.Rows) error {
		var (
			turn         int
			r            = &harness.Round{}
			role         sql.NullString
			callID, name sql.NullString
			parts        []byte
			final, isErr sql.NullInt64
		)
		if err := rows.Scan(&turn, &r.Index, &final, &r.Usage.Input, &r.Usage.Cached, &r.Usage.CacheWrite, &r.Usage.Output,
			&r.Stats.Messages, &r.Stats.EvidenceChars, &r.Stats.Tools, &r.Stats.ToolBytes,
			&role, &parts, &callID, &name, &isErr); err != nil {
			return err
		}
		r.Final = final.Int64 != 0
		r.Assistant = harness.Message{Role: harness.Role(role.String), ToolCallID: callID.String, ToolName: name.String, IsError: isErr.Int64 != 0}
		var err error
		if r.Assistant.Parts, err = codec.DecodeParts("", false, parts); err != nil {
			return fmt.Errorf("turn %d round %d: assistant message: %w", turn, r.Index, err)
		}
		return l.Round(turn, r)
	})
}

func (l loaded) loadCalls(ctx context.Context, tx *sql.Tx, id string, _ bool) error {
	return query(ctx, tx, `SELECT turn, round, dropped, call_id, name, args FROM tool_calls WHERE conv_id = ? ORDER BY turn, round, dropped, seq`,
		[]any{id}, func(rows *sql.Rows) error {
			var (
				turn, round, dropped int
				c                    harness.ToolCall
				args                 []byte
			)
			if err := rows.Scan(&turn, &round, &dropped, &c.ID, &c.Name, &args); err != nil {
				return err
			}
			if args != nil {
				c.Args = json.RawMessage(args)
			}
			return l.Call(turn, round, dropped != 0, c)
		})
}

// loadResults reads the results. The payload columns are read only for
// results whose model copy is the payload (or for LoadFull): a CASE that
// is false never pages in the body's overflow pages.
func (l loaded) loadResults(ctx context.Context, tx *sql.Tx, id string, full bool) error {
	var chunked []chunkedBody
	err := query(ctx, tx, `SELECT r.turn, r.round, r.seq, r.call_id, r.tool, r.is_error, r.timed_out, r.bytes, r.model_text, r.model, r.meta,
	CASE WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.text END,
	CASE WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.parts END,
	CASE WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.structured END,
	CASE WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.chunked END
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = ?2 ORDER BY r.turn, r.round, r.seq`, []any{full, id}, func(rows *sql.Rows) error {
		var k resultKey
		res, kind, err := scanResult(rows, &k)
		if err != nil {
			return err
		}
		if err := l.Result(k.turn, k.round, k.seq, res); err != nil {
			return err
		}
		if kind != "" {
			chunked = append(chunked, chunkedBody{k, res, kind})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return readChunks(ctx, tx, id, chunked)
}

func (l loaded) loadCuts(ctx context.Context, tx *sql.Tx, id string, _ bool) error {
	return query(ctx, tx, `SELECT turn, round, seq, `+cutColumns+` FROM cuts WHERE conv_id = ? ORDER BY turn, round, seq, n`,
		[]any{id}, func(rows *sql.Rows) error {
			var k resultKey
			c, err := scanCut(rows, &k.turn, &k.round, &k.seq)
			if err != nil {
				return fmt.Errorf("result %d.%d.%d: %w", k.turn, k.round, k.seq, err)
			}
			return l.Cut(k.turn, k.round, k.seq, c)
		})
}

func (l loaded) loadNotes(ctx context.Context, tx *sql.Tx, id string, _ bool) error {
	return query(ctx, tx, `SELECT after, text, by, clear_turn, clear_round FROM notes WHERE conv_id = ? ORDER BY seq`, []any{id}, func(rows *sql.Rows) error {
		n := &harness.Note{}
		if err := rows.Scan(&n.After, &n.Text, &n.By, &n.ClearTurn, &n.ClearRound); err != nil {
			return err
		}
		l.Conv.Notes = append(l.Conv.Notes, n)
		return nil
	})
}

// scanResult reads one row of the results query into a ToolResult. A
// payload stored in chunks (see chunks.go) is not decoded here: kind names
// the column the chunks stand for, for readChunks.
func scanResult(rows *sql.Rows, k *resultKey) (res *harness.ToolResult, kind string, err error) {
	var (
		row                     codec.ResultRow
		isErr, timedOut         int
		modelText, text, chunks sql.NullString
	)
	if err := rows.Scan(&k.turn, &k.round, &k.seq, &row.CallID, &row.Tool, &isErr, &timedOut, &row.Bytes,
		&modelText, &row.ModelJSON, &row.Meta, &text, &row.PartsJSON, &row.Structured, &chunks); err != nil {
		return nil, "", err
	}
	row.IsError, row.TimedOut = isErr != 0, timedOut != 0
	row.ModelText, row.ModelIsText = modelText.String, modelText.Valid
	row.Text, row.TextIsText = text.String, text.Valid
	// A chunked body's text and parts columns are empty: Decode leaves its
	// payload nil, and readChunks fills it in.
	if res, err = row.Decode(); err != nil {
		return nil, "", err
	}
	return res, chunks.String, nil
}

// query runs q and calls fn for each row.
func query(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// FullResult returns the stored result of callID with its full payload
// (the newest, when a model reused a call id in two rounds). It is what the
// recall tool serves; a missing conversation or call wraps store.ErrNotFound.
func (s *Store) FullResult(ctx context.Context, convID, callID string) (*harness.ToolResult, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	var (
		res *harness.ToolResult
		k   resultKey
	)
	var kind string
	err = query(ctx, tx, `SELECT r.turn, r.round, r.seq, r.call_id, r.tool, r.is_error, r.timed_out, r.bytes, r.model_text, r.model, r.meta, b.text, b.parts, b.structured, b.chunked
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = ? AND r.call_id = ? ORDER BY r.turn DESC, r.round DESC, r.seq DESC LIMIT 1`, []any{convID, callID}, func(rows *sql.Rows) error {
		var err error
		res, kind, err = scanResult(rows, &k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: result %s of %s: %w", callID, convID, err)
	}
	if res == nil {
		return nil, fmt.Errorf("sqlite store: result %s of conversation %s: %w", callID, convID, store.ErrNotFound)
	}
	if kind != "" {
		if err := readChunks(ctx, tx, convID, []chunkedBody{{k, res, kind}}); err != nil {
			return nil, fmt.Errorf("sqlite store: result %s of %s: %w", callID, convID, err)
		}
	}
	err = query(ctx, tx, `SELECT `+cutColumns+` FROM cuts WHERE conv_id = ? AND turn = ? AND round = ? AND seq = ? ORDER BY n`,
		[]any{convID, k.turn, k.round, k.seq}, func(rows *sql.Rows) error {
			c, err := scanCut(rows)
			if err != nil {
				return err
			}
			res.Cuts = append(res.Cuts, c)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: result %s of %s: %w", callID, convID, err)
	}
	return res, nil
}

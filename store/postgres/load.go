package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// read runs fn in one read-only, repeatable-read transaction: a
// consistent snapshot even while turns are being written.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (s *Store) load(ctx context.Context, id string, full bool) (*harness.Conversation, error) {
	var conv *harness.Conversation
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		conv, err = loadTx(ctx, tx, id, full)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: loading %s: %w", id, err)
	}
	return conv, nil
}

// exists refuses a conversation the store does not hold.
func exists(ctx context.Context, tx pgx.Tx, id string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM conversations WHERE id = $1`, b(id)).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("conversation %q: %w", id, store.ErrNotFound)
	}
	return nil
}

func loadTx(ctx context.Context, tx pgx.Tx, id string, full bool) (*harness.Conversation, error) {
	if err := exists(ctx, tx, id); err != nil {
		return nil, err
	}
	l := codec.NewLoader(id)
	err := query(ctx, tx, `SELECT idx, input, outcome, started_ns, ended_ns, input_tokens, cached_tokens, cache_write_tokens, output_tokens
FROM turns WHERE conv_id = $1 ORDER BY idx`, []any{b(id)}, func(rows pgx.Rows) error {
		t := &harness.Turn{}
		var started, ended int64
		if err := rows.Scan(&t.Index, str{&t.Input}, str{(*string)(&t.Outcome)}, &started, &ended,
			&t.Usage.Input, &t.Usage.Cached, &t.Usage.CacheWrite, &t.Usage.Output); err != nil {
			return err
		}
		t.Started, t.Ended = codec.FromNS(started), codec.FromNS(ended)
		l.Turn(t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("turns: %w", err)
	}

	err = query(ctx, tx, `SELECT r.turn, r.idx, r.final, r.input_tokens, r.cached_tokens, r.cache_write_tokens, r.output_tokens,
	r.req_messages, r.req_evidence_chars, r.req_tools, r.req_tool_bytes,
	m.role, m.parts, m.tool_call_id, m.tool_name, COALESCE(m.is_error, false)
FROM rounds r LEFT JOIN messages m ON m.conv_id = r.conv_id AND m.turn = r.turn AND m.round = r.idx
WHERE r.conv_id = $1 ORDER BY r.turn, r.idx`, []any{b(id)}, func(rows pgx.Rows) error {
		var (
			turn  int
			r     = &harness.Round{}
			parts []byte
		)
		if err := rows.Scan(&turn, &r.Index, &r.Final, &r.Usage.Input, &r.Usage.Cached, &r.Usage.CacheWrite, &r.Usage.Output,
			&r.Stats.Messages, &r.Stats.EvidenceChars, &r.Stats.Tools, &r.Stats.ToolBytes,
			str{(*string)(&r.Assistant.Role)}, &parts, str{&r.Assistant.ToolCallID}, str{&r.Assistant.ToolName}, &r.Assistant.IsError); err != nil {
			return err
		}
		var err error
		if r.Assistant.Parts, err = codec.DecodeParts("", false, parts); err != nil {
			return fmt.Errorf("turn %d round %d: assistant message: %w", turn, r.Index, err)
		}
		return l.Round(turn, r)
	})
	if err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}

	err = query(ctx, tx, `SELECT turn, round, dropped, call_id, name, args FROM tool_calls WHERE conv_id = $1 ORDER BY turn, round, dropped, seq`,
		[]any{b(id)}, func(rows pgx.Rows) error {
			var (
				turn, round int
				dropped     bool
				c           harness.ToolCall
				args        []byte
			)
			if err := rows.Scan(&turn, &round, &dropped, str{&c.ID}, str{&c.Name}, &args); err != nil {
				return err
			}
			if args != nil {
				c.Args = json.RawMessage(args)
			}
			return l.Call(turn, round, dropped, c)
		})
	if err != nil {
		return nil, fmt.Errorf("tool calls: %w", err)
	}

	// The payload columns are read only for results whose model copy is
	// the payload (or for LoadFull): a CASE that is false never reads the
	// body's out-of-line (TOAST) value.
	err = query(ctx, tx, `SELECT r.turn, r.round, r.seq, `+resultColumns+`,
	CASE WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.text END,
	CASE WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.parts END,
	CASE WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.structured END
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = $2 ORDER BY r.turn, r.round, r.seq`, []any{full, b(id)}, func(rows pgx.Rows) error {
		var k [3]int
		res, err := scanResult(rows, &k)
		if err != nil {
			return err
		}
		return l.Result(k[0], k[1], k[2], res)
	})
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}

	err = query(ctx, tx, `SELECT turn, round, seq, `+cutColumns+` FROM cuts WHERE conv_id = $1 ORDER BY turn, round, seq, n`,
		[]any{b(id)}, func(rows pgx.Rows) error {
			var k [3]int
			c, err := scanCut(rows, &k[0], &k[1], &k[2])
			if err != nil {
				return fmt.Errorf("result %d.%d.%d: %w", k[0], k[1], k[2], err)
			}
			return l.Cut(k[0], k[1], k[2], c)
		})
	if err != nil {
		return nil, fmt.Errorf("cuts: %w", err)
	}

	err = query(ctx, tx, `SELECT after, text, by, clear_turn, clear_round FROM notes WHERE conv_id = $1 ORDER BY seq`, []any{b(id)}, func(rows pgx.Rows) error {
		n := &harness.Note{}
		if err := rows.Scan(&n.After, str{&n.Text}, str{&n.By}, &n.ClearTurn, &n.ClearRound); err != nil {
			return err
		}
		l.Conv.Notes = append(l.Conv.Notes, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return l.Conv, nil
}

// resultColumns are the columns of a result row scanResult reads before
// the payload's.
const resultColumns = "r.call_id, r.tool, r.is_error, r.timed_out, r.bytes, r.model_text, r.model, r.meta"

// scanResult reads one row of a results query (turn, round, seq,
// resultColumns, then text, parts and structured of the body).
func scanResult(rows pgx.Rows, k *[3]int) (*harness.ToolResult, error) {
	var (
		row             codec.ResultRow
		modelText, text []byte
	)
	if err := rows.Scan(&k[0], &k[1], &k[2], str{&row.CallID}, str{&row.Tool}, &row.IsError, &row.TimedOut, &row.Bytes,
		&modelText, &row.ModelJSON, &row.Meta, &text, &row.PartsJSON, &row.Structured); err != nil {
		return nil, err
	}
	row.ModelText, row.ModelIsText = string(modelText), modelText != nil
	row.Text, row.TextIsText = string(text), text != nil
	return row.Decode()
}

// cutColumns are the columns of a stored cut, in the order scanCut reads
// them.
const cutColumns = "kind, by, bytes_in, bytes_out, locator, of, refs"

// scanCut reads one row whose first columns are scanned into keys and
// whose last are cutColumns.
func scanCut(rows pgx.Rows, keys ...any) (harness.Cut, error) {
	var (
		c    harness.Cut
		refs *string
	)
	if err := rows.Scan(append(keys, str{(*string)(&c.Kind)}, str{&c.By}, &c.BytesIn, &c.BytesOut, str{&c.Locator}, str{&c.Of}, &refs)...); err != nil {
		return c, err
	}
	var err error
	if refs != nil {
		c.Refs, err = codec.DecodeRefs(*refs, true)
	}
	return c, err
}

// query runs q and calls fn for each row.
func query(ctx context.Context, tx pgx.Tx, q string, args []any, fn func(pgx.Rows) error) error {
	rows, err := tx.Query(ctx, q, args...)
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
	var res *harness.ToolResult
	err := s.read(ctx, func(tx pgx.Tx) error {
		var k [3]int
		err := query(ctx, tx, `SELECT r.turn, r.round, r.seq, `+resultColumns+`, b.text, b.parts, b.structured
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = $1 AND r.call_id = $2 ORDER BY r.turn DESC, r.round DESC, r.seq DESC LIMIT 1`, []any{b(convID), b(callID)}, func(rows pgx.Rows) error {
			var err error
			res, err = scanResult(rows, &k)
			return err
		})
		if err != nil || res == nil {
			return err
		}
		return query(ctx, tx, `SELECT `+cutColumns+` FROM cuts WHERE conv_id = $1 AND turn = $2 AND round = $3 AND seq = $4 ORDER BY n`,
			[]any{b(convID), k[0], k[1], k[2]}, func(rows pgx.Rows) error {
				c, err := scanCut(rows)
				if err != nil {
					return err
				}
				res.Cuts = append(res.Cuts, c)
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: result %s of %s: %w", callID, convID, err)
	}
	if res == nil {
		return nil, fmt.Errorf("postgres store: result %s of conversation %s: %w", callID, convID, store.ErrNotFound)
	}
	return res, nil
}

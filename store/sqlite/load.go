package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/rows"
)

// Load returns a stored conversation, ready for Agent.Run to continue it.
// The full payload of a result a guard cut stays in the store: the result
// comes back with its model copy, cuts, sizes and metadata, and Parts and
// Structured nil (store.Partial reports it; FullResult or store.Full fetch
// the rest). Views only use the model copy, so resuming costs the same
// whatever the size of the payloads.
func (s *sqliteStore) Load(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsModel)
}

// LoadFull returns a stored conversation with every full payload.
func (s *sqliteStore) LoadFull(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsAll)
}

// LoadOutline returns a stored conversation without any result's
// payload (see store.DB.LoadOutline).
func (s *sqliteStore) LoadOutline(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsNone)
}

func (s *sqliteStore) load(ctx context.Context, id string, which rows.Payloads) (*harness.Conversation, error) {
	// One read transaction: a consistent snapshot even while a run on the
	// same file is writing.
	var conv *harness.Conversation
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		conv, err = loadTx(ctx, tx, id, which)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: loading %s: %w", id, err)
	}
	return conv, nil
}

// read runs fn in one read-only transaction.
func (s *sqliteStore) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// exists refuses a conversation the store does not hold.
func exists(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("conversation %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// loadTx reads conversation id in one read transaction, table by table,
// then the payloads stored in chunks.
func loadTx(ctx context.Context, tx *sql.Tx, id string, which rows.Payloads) (*harness.Conversation, error) {
	if err := exists(ctx, tx, id); err != nil {
		return nil, err
	}
	l := rows.NewLoader(id)
	var chunked []chunkedBody
	results := func(sc rows.Scanner) error {
		var kind string
		k, res, err := l.ScanResult(sc, rows.Str{P: &kind})
		if err == nil && kind != "" {
			chunked = append(chunked, chunkedBody{k, res, kind})
		}
		return err
	}
	err := rows.Run(queryIn(ctx, tx),
		rows.Step{What: "turns", SQL: `SELECT ` + rows.TurnColumns + ` FROM turns WHERE conv_id = ? ORDER BY idx`, Args: []any{id}, Row: l.ScanTurn},
		rows.Step{What: "turn context", SQL: `SELECT ` + rows.ContextColumns + ` FROM turn_context WHERE conv_id = ? ORDER BY turn, seq`,
			Args: []any{id}, Row: l.ScanContext},
		rows.Step{What: "rounds", SQL: `SELECT ` + rows.RoundColumns + `
FROM rounds r LEFT JOIN messages m ON m.conv_id = r.conv_id AND m.turn = r.turn AND m.round = r.idx
WHERE r.conv_id = ? ORDER BY r.turn, r.idx`, Args: []any{id}, Row: l.ScanRound},
		rows.Step{What: "tool calls", SQL: `SELECT ` + rows.CallColumns + ` FROM tool_calls WHERE conv_id = ? ORDER BY turn, round, dropped, seq`,
			Args: []any{id}, Row: l.ScanCall},
		rows.Step{What: "results", SQL: resultsSQL, Args: []any{which == rows.PayloadsAll, id, which == rows.PayloadsNone}, Row: results},
		rows.Step{What: "cuts", SQL: `SELECT turn, round, seq, ` + rows.CutColumns + ` FROM cuts WHERE conv_id = ? ORDER BY turn, round, seq, n`,
			Args: []any{id}, Row: l.ScanCut},
		rows.Step{What: "notes", SQL: `SELECT ` + rows.NoteColumns + ` FROM notes WHERE conv_id = ? ORDER BY seq`, Args: []any{id}, Row: l.ScanNote})
	if err != nil {
		return nil, err
	}
	if err := readChunks(ctx, tx, id, chunked); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return l.Conv, nil
}

// resultsSQL selects the results of a conversation (?2) and the payload
// columns only for results whose model copy is the payload, or all when
// ?1 (LoadFull), or none when ?3 (LoadOutline): a CASE that is false
// never pages in the body's overflow pages. The last column names a
// payload stored in chunks.
const resultsSQL = `SELECT ` + rows.ResultColumns + `,
	CASE WHEN ?3 THEN NULL WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.text END,
	CASE WHEN ?3 THEN NULL WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.parts END,
	CASE WHEN ?3 THEN NULL WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.structured END,
	CASE WHEN ?3 THEN NULL WHEN ?1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.chunked END
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = ?2 ORDER BY r.turn, r.round, r.seq`

// queryIn is query in tx, for rows.Run.
func queryIn(ctx context.Context, tx *sql.Tx) rows.Query {
	return func(q string, args []any, fn func(rows.Scanner) error) error { return query(ctx, tx, q, args, fn) }
}

// query runs q and calls fn for each row.
func query(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(rows.Scanner) error) error {
	rs, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := fn(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// FullResult returns the stored result of callID with its full payload
// (the newest, when a model reused a call id in two rounds). It is what the
// recall tool serves; a missing conversation or call wraps store.ErrNotFound.
func (s *sqliteStore) FullResult(ctx context.Context, convID, callID string) (*harness.ToolResult, error) {
	var res *harness.ToolResult
	err := s.read(ctx, func(tx *sql.Tx) error {
		var (
			k    rows.Key
			kind string
		)
		err := query(ctx, tx, `SELECT `+rows.ResultColumns+`, b.text, b.parts, b.structured, b.chunked
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = ? AND r.call_id = ? ORDER BY r.turn DESC, r.round DESC, r.seq DESC LIMIT 1`, []any{convID, callID}, func(sc rows.Scanner) error {
			var err error
			k, res, err = rows.ScanResult(sc, rows.Str{P: &kind})
			return err
		})
		if err != nil || res == nil {
			return err
		}
		if kind != "" {
			if err := readChunks(ctx, tx, convID, []chunkedBody{{k, res, kind}}); err != nil {
				return err
			}
		}
		return query(ctx, tx, `SELECT `+rows.CutColumns+` FROM cuts WHERE conv_id = ? AND turn = ? AND round = ? AND seq = ? ORDER BY n`,
			[]any{convID, k.Turn, k.Round, k.Seq}, func(sc rows.Scanner) error {
				c, err := rows.Cut(sc)
				if err != nil {
					return err
				}
				res.Cuts = append(res.Cuts, c)
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: result %s of %s: %w", callID, convID, err)
	}
	if res == nil {
		return nil, fmt.Errorf("sqlite store: result %s of conversation %s: %w", callID, convID, store.ErrNotFound)
	}
	return res, nil
}

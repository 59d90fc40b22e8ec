package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
func (s *pgStore) Load(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsModel)
}

// LoadFull returns a stored conversation with every full payload.
func (s *pgStore) LoadFull(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsAll)
}

// LoadOutline returns a stored conversation without any result's
// payload (see store.DB.LoadOutline).
func (s *pgStore) LoadOutline(ctx context.Context, id string) (*harness.Conversation, error) {
	return s.load(ctx, id, rows.PayloadsNone)
}

// read runs fn in one read-only, repeatable-read transaction: a
// consistent snapshot even while turns are being written.
func (s *pgStore) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.reads, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (s *pgStore) load(ctx context.Context, id string, which rows.Payloads) (*harness.Conversation, error) {
	conv, err := loadBatch(ctx, s.reads, id, which)
	if err != nil {
		return nil, fmt.Errorf("postgres store: loading %s: %w", id, err)
	}
	return conv, nil
}

// exists refuses a conversation the store does not hold.
func exists(ctx context.Context, tx pgx.Tx, id string) error {
	var n int
	if err := tx.QueryRow(ctx, existsSQL, b(id)).Scan(&n); err != nil {
		return err
	}
	return found(id, n)
}

// existsSQL counts the conversations of id $1 (0 or 1).
const existsSQL = `SELECT COUNT(*) FROM conversations WHERE id = $1`

// found is exists' verdict on n, the count existsSQL returned.
func found(id string, n int) error {
	if n == 0 {
		return fmt.Errorf("conversation %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// loadBatch reads conversation id table by table in one round trip: the
// BEGIN of a read-only, repeatable-read transaction (one snapshot even
// while turns are being written), the check that it exists, a query per
// table and the COMMIT go to the server as one batch. A replica that
// reads again a conversation another replica advanced does so on its
// requests' path, where each round trip counts.
func loadBatch(ctx context.Context, pool *pgxpool.Pool, id string, which rows.Payloads) (*harness.Conversation, error) {
	l := rows.NewLoader(id)
	steps := loadSteps(l, id, which)
	var batch pgx.Batch
	batch.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	batch.Queue(existsSQL, b(id))
	for _, st := range steps {
		batch.Queue(st.SQL, st.Args...)
	}
	batch.Queue(`COMMIT`)
	br := pool.SendBatch(ctx, &batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	var n int
	if err := br.QueryRow().Scan(&n); err != nil {
		return nil, err
	}
	if err := found(id, n); err != nil {
		return nil, err
	}
	for _, st := range steps {
		if err := scanAll(br, st.Row); err != nil {
			return nil, fmt.Errorf("%s: %w", st.What, err)
		}
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, err
	}
	return l.Conv, nil
}

// scanAll reads the next result of br, calling fn for each row.
func scanAll(br pgx.BatchResults, fn func(rows.Scanner) error) error {
	rs, err := br.Query()
	return eachRow(rs, err, fn)
}

// loadSteps are the queries that read conversation id into l, table by
// table.
func loadSteps(l *rows.Loader, id string, which rows.Payloads) []rows.Step {
	results := func(sc rows.Scanner) error {
		_, _, err := l.ScanResult(sc)
		return err
	}
	return []rows.Step{
		{What: "turns", SQL: `SELECT ` + rows.TurnColumns + ` FROM turns WHERE conv_id = $1 ORDER BY idx`, Args: []any{b(id)}, Row: l.ScanTurn},
		{What: "turn context", SQL: `SELECT ` + rows.ContextColumns + ` FROM turn_context WHERE conv_id = $1 ORDER BY turn, seq`,
			Args: []any{b(id)}, Row: l.ScanContext},
		{What: "rounds", SQL: `SELECT ` + rows.RoundColumns + `
FROM rounds r LEFT JOIN messages m ON m.conv_id = r.conv_id AND m.turn = r.turn AND m.round = r.idx
WHERE r.conv_id = $1 ORDER BY r.turn, r.idx`, Args: []any{b(id)}, Row: l.ScanRound},
		{What: "tool calls", SQL: `SELECT ` + rows.CallColumns + ` FROM tool_calls WHERE conv_id = $1 ORDER BY turn, round, dropped, seq`,
			Args: []any{b(id)}, Row: l.ScanCall},
		{What: "results", SQL: resultsSQL, Args: []any{which == rows.PayloadsAll, b(id), which == rows.PayloadsNone}, Row: results},
		{What: "cuts", SQL: `SELECT turn, round, seq, ` + rows.CutColumns + ` FROM cuts WHERE conv_id = $1 ORDER BY turn, round, seq, n`,
			Args: []any{b(id)}, Row: l.ScanCut},
		{What: "notes", SQL: `SELECT ` + rows.NoteColumns + ` FROM notes WHERE conv_id = $1 ORDER BY seq`, Args: []any{b(id)}, Row: l.ScanNote},
	}
}

// resultsSQL selects the results of a conversation ($2) and the payload
// columns only for results whose model copy is the payload, or all when
// $1 (LoadFull), or none when $3 (LoadOutline): a CASE that is false never
// reads the body's out-of-line (TOAST) value.
const resultsSQL = `SELECT ` + rows.ResultColumns + `,
	CASE WHEN $3 THEN NULL WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.text END,
	CASE WHEN $3 THEN NULL WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.parts END,
	CASE WHEN $3 THEN NULL WHEN $1 OR (r.model_text IS NULL AND r.model IS NULL) THEN b.structured END
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = $2 ORDER BY r.turn, r.round, r.seq`

// querier runs a query: a transaction, or a pool for one statement.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryIn is query in tx, for rows.Run.
func queryIn(ctx context.Context, tx querier) rows.Query {
	return func(q string, args []any, fn func(rows.Scanner) error) error { return query(ctx, tx, q, args, fn) }
}

// query runs q and calls fn for each row.
func query(ctx context.Context, tx querier, q string, args []any, fn func(rows.Scanner) error) error {
	rs, err := tx.Query(ctx, q, args...)
	return eachRow(rs, err, fn)
}

// eachRow calls fn for each row of rs, the answer of a query that
// failed with err when err is not nil, and closes rs.
func eachRow(rs pgx.Rows, err error, fn func(rows.Scanner) error) error {
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
func (s *pgStore) FullResult(ctx context.Context, convID, callID string) (*harness.ToolResult, error) {
	var res *harness.ToolResult
	err := s.read(ctx, func(tx pgx.Tx) error {
		var k rows.Key
		err := query(ctx, tx, `SELECT `+rows.ResultColumns+`, b.text, b.parts, b.structured
FROM results r LEFT JOIN result_bodies b ON b.conv_id = r.conv_id AND b.turn = r.turn AND b.round = r.round AND b.seq = r.seq
WHERE r.conv_id = $1 AND r.call_id = $2 ORDER BY r.turn DESC, r.round DESC, r.seq DESC LIMIT 1`, []any{b(convID), b(callID)}, func(sc rows.Scanner) error {
			var err error
			k, res, err = rows.ScanResult(sc)
			return err
		})
		if err != nil || res == nil {
			return err
		}
		return query(ctx, tx, `SELECT `+rows.CutColumns+` FROM cuts WHERE conv_id = $1 AND turn = $2 AND round = $3 AND seq = $4 ORDER BY n`,
			[]any{b(convID), k.Turn, k.Round, k.Seq}, func(sc rows.Scanner) error {
				c, err := rows.Cut(sc)
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

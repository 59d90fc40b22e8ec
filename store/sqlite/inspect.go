package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/rows"
)

// The refs column of cuts (schema v5) keeps harness.Cut.Refs, encoded by
// codec.EncodeRefs: NULL for nil, else a JSON array of the call ids, which
// SQLite's json_each reads.

// Calls returns the tool calls of a conversation (of one turn, when turn
// is not 0) with, for each, the sizes of what the tool returned and of the
// model's copy, the guards' cuts and markers, and the per-turn trims of
// every request. It reads no payload.
func (s *sqliteStore) Calls(ctx context.Context, convID string, turn int) ([]store.CallRecord, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	var calls rows.Calls
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := exists(ctx, tx, convID); err != nil {
			return err
		}
		args := []any{convID, turn, turn}
		return rows.Run(queryIn(ctx, tx),
			rows.Step{What: "results", SQL: `SELECT ` + rows.CallRecordColumns + `
FROM results r LEFT JOIN tool_calls c ON c.conv_id = r.conv_id AND c.turn = r.turn AND c.round = r.round AND c.dropped = 0 AND c.seq = r.seq
WHERE r.conv_id = ? AND (? = 0 OR r.turn = ?) ORDER BY r.turn, r.round, r.seq`, Args: args, Row: calls.ScanRecord},
			rows.Step{What: "cuts", SQL: `SELECT turn, round, seq, ` + rows.CutColumns + ` FROM cuts
WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY turn, round, seq, n`, Args: args, Row: calls.ScanCut},
			rows.Step{What: "view cuts", SQL: `SELECT ` + rows.ViewCutColumns + ` FROM view_cuts
WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY id`, Args: args, Row: calls.ScanView})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: calls of %s: %w", convID, err)
	}
	return calls.Out, nil
}

// Events returns the stored events of a conversation (of one turn, when
// turn is not 0), in the order they were stored.
func (s *sqliteStore) Events(ctx context.Context, convID string, turn int) ([]harness.Event, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	var out []harness.Event
	err := s.read(ctx, func(tx *sql.Tx) error {
		return query(ctx, tx, `SELECT body FROM events WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY id`, []any{convID, turn, turn},
			func(sc rows.Scanner) error {
				e, err := rows.ScanEvent(sc)
				out = append(out, e)
				return err
			})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: events of %s: %w", convID, err)
	}
	return out, nil
}

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/rows"
)

// Calls returns the tool calls of a conversation (of one turn, when turn
// is not 0) with, for each, the sizes of what the tool returned and of the
// model's copy, the guards' cuts and markers, and the per-turn trims of
// every request. It reads no payload.
func (s *pgStore) Calls(ctx context.Context, convID string, turn int) ([]store.CallRecord, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	var calls rows.Calls
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := exists(ctx, tx, convID); err != nil {
			return err
		}
		args := []any{b(convID), turn}
		return rows.Run(queryIn(ctx, tx),
			rows.Step{What: "results", SQL: `SELECT ` + rows.CallRecordColumns + `
FROM results r LEFT JOIN tool_calls c ON c.conv_id = r.conv_id AND c.turn = r.turn AND c.round = r.round AND NOT c.dropped AND c.seq = r.seq
WHERE r.conv_id = $1 AND ($2 = 0 OR r.turn = $2) ORDER BY r.turn, r.round, r.seq`, Args: args, Row: calls.ScanRecord},
			rows.Step{What: "cuts", SQL: `SELECT turn, round, seq, ` + rows.CutColumns + ` FROM cuts
WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) ORDER BY turn, round, seq, n`, Args: args, Row: calls.ScanCut},
			rows.Step{What: "view cuts", SQL: `SELECT ` + rows.ViewCutColumns + ` FROM view_cuts
WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) ORDER BY id`, Args: args, Row: calls.ScanView})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: calls of %s: %w", convID, err)
	}
	return calls.Out, nil
}

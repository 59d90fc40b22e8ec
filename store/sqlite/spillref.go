package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/rows"
)

// SpillOnly returns the locators of the spill files that hold the only
// full copy of a stored result (see store.DB.SpillOnly).
func (s *sqliteStore) SpillOnly(ctx context.Context) (map[string]bool, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	out := map[string]bool{}
	err = query(ctx, tx, `SELECT DISTINCT c.locator FROM cuts c
JOIN results r ON r.conv_id = c.conv_id AND r.turn = c.turn AND r.round = c.round AND r.seq = c.seq
WHERE c.kind = ? AND c.locator != '' AND r.full_chars < r.bytes`, []any{string(harness.CutSpilled)}, func(sc rows.Scanner) error {
		var loc string
		if err := sc.Scan(&loc); err != nil {
			return err
		}
		out[loc] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: spill files: %w", err)
	}
	return out, nil
}

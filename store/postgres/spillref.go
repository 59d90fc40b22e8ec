package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/rows"
)

// SpillOnly returns the locators of the spill files that hold the only
// full copy of a stored result (see store.DB.SpillOnly).
func (s *pgStore) SpillOnly(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		return query(ctx, tx, `SELECT DISTINCT c.locator FROM cuts c
JOIN results r ON r.conv_id = c.conv_id AND r.turn = c.turn AND r.round = c.round AND r.seq = c.seq
WHERE c.kind = $1 AND c.locator <> ''::bytea AND r.full_chars < r.bytes`, []any{b(string(harness.CutSpilled))}, func(sc rows.Scanner) error {
			var loc string
			if err := sc.Scan(rows.Str{P: &loc}); err != nil {
				return err
			}
			out[loc] = true
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: spill files: %w", err)
	}
	return out, nil
}

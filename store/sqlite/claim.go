package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentharness/harness/store"
)

// claimsSchema is migration 10: the claim log of store.Claimer. Writes
// are serialized, so seq (the rowid) is assigned in commit order.
const claimsSchema = `
CREATE TABLE proxy_claims (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	conv_id TEXT NOT NULL,
	key     TEXT NOT NULL,
	value   BLOB NOT NULL,
	UNIQUE (conv_id, key)
);
CREATE INDEX proxy_claims_by_conv ON proxy_claims (conv_id, seq);
`

// Claim implements store.Claimer: in one transaction, INSERT … ON
// CONFLICT DO NOTHING of each entry, then the row that holds is read
// back.
func (s *sqliteStore) Claim(ctx context.Context, conv string, entries []store.Claim) ([]store.Claim, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := make([]store.Claim, len(entries))
	err := s.tx(ctx, func(w *txw) error {
		for i, e := range entries {
			c := store.Claim{Key: e.Key}
			err := w.tx.QueryRowContext(ctx, `INSERT INTO proxy_claims (conv_id, key, value) VALUES (?, ?, ?)
ON CONFLICT (conv_id, key) DO NOTHING RETURNING seq`, conv, e.Key, e.Value).Scan(&c.Seq)
			switch {
			case err == nil:
				c.Value, c.Won = e.Value, true
			case errors.Is(err, sql.ErrNoRows):
				err = w.tx.QueryRowContext(ctx, `SELECT seq, value FROM proxy_claims WHERE conv_id = ? AND key = ?`, conv, e.Key).Scan(&c.Seq, &c.Value)
			}
			if err != nil {
				return fmt.Errorf("claiming %q: %w", e.Key, err)
			}
			out[i] = c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: claiming %d entries of %s: %w", len(entries), conv, err)
	}
	return out, nil
}

// Claims implements store.Claimer.
func (s *sqliteStore) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	var out []store.Claim
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, key, value FROM proxy_claims WHERE conv_id = ? AND seq > ? ORDER BY seq`, conv, after)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c store.Claim
			if err := rows.Scan(&c.Seq, &c.Key, &c.Value); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: claims of %s: %w", conv, err)
	}
	return out, nil
}

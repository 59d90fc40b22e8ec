package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
)

// claimsSchema is migration 5: the claim log of store.Claimer. seq is
// taken under a per-conversation advisory lock held until commit, so the
// entries of one conversation commit in seq order (see Claims).
const claimsSchema = `
CREATE TABLE proxy_claims (
	seq     bigserial PRIMARY KEY,
	conv_id bytea NOT NULL,
	key     bytea NOT NULL,
	value   bytea NOT NULL,
	UNIQUE (conv_id, key)
);
CREATE INDEX proxy_claims_by_conv ON proxy_claims (conv_id, seq);
`

// claimLockSpace tells the claim log's advisory locks from others.
const claimLockSpace = 0x68636c6d // "hclm"

// Claim implements store.Claimer: INSERT … ON CONFLICT DO NOTHING, then
// the row that holds is read back.
func (s *Store) Claim(ctx context.Context, conv, key string, value []byte) (store.Claim, error) {
	c := store.Claim{Key: key}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(encode($2, 'hex')))`, claimLockSpace, b(conv)); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO proxy_claims (conv_id, key, value) VALUES ($1, $2, $3)
ON CONFLICT (conv_id, key) DO NOTHING RETURNING seq`, b(conv), b(key), value).Scan(&c.Seq)
		if err == nil {
			c.Value, c.Won = value, true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return tx.QueryRow(ctx, `SELECT seq, value FROM proxy_claims WHERE conv_id = $1 AND key = $2`, b(conv), b(key)).Scan(&c.Seq, &c.Value)
	})
	if err != nil {
		return store.Claim{}, fmt.Errorf("postgres store: claiming %q of %s: %w", key, conv, err)
	}
	return c, nil
}

// Claims implements store.Claimer.
func (s *Store) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, key, value FROM proxy_claims WHERE conv_id = $1 AND seq > $2 ORDER BY seq`, b(conv), after)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claims of %s: %w", conv, err)
	}
	defer rows.Close()
	var out []store.Claim
	for rows.Next() {
		var c store.Claim
		var key []byte
		if err := rows.Scan(&c.Seq, &key, &c.Value); err != nil {
			return nil, fmt.Errorf("postgres store: claims of %s: %w", conv, err)
		}
		c.Key = string(key)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: claims of %s: %w", conv, err)
	}
	return out, nil
}

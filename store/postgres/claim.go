package postgres

import (
	"context"
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

// Claim implements store.Claimer in one round trip: the lock, an INSERT
// … ON CONFLICT DO NOTHING of every entry (returning the keys it stored),
// a read of the rows that hold and a NOTIFY of the conversation's keys
// that are not quiet (heard at commit by WatchClaims) are sent as one
// batch, which the server runs as one transaction.
func (s *pgStore) Claim(ctx context.Context, conv string, entries []store.Claim) ([]store.Claim, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	keys, values := make([][]byte, 0, len(entries)), make([][]byte, 0, len(entries))
	var loud [][]byte // the keys a watch may wait for
	first := map[string]bool{}
	for _, e := range entries {
		if first[e.Key] {
			continue
		}
		first[e.Key] = true
		keys, values = append(keys, b(e.Key)), append(values, e.Value)
		if !e.Quiet {
			loud = append(loud, b(e.Key))
		}
	}
	var batch pgx.Batch
	batch.Queue(`SELECT pg_advisory_xact_lock($1, hashtext(encode($2, 'hex')))`, claimLockSpace, b(conv))
	batch.Queue(`INSERT INTO proxy_claims (conv_id, key, value) SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS t(k, v, i)
ORDER BY i ON CONFLICT (conv_id, key) DO NOTHING RETURNING key`, b(conv), keys, values)
	batch.Queue(`SELECT seq, key, value FROM proxy_claims WHERE conv_id = $1 AND key = ANY($2)`, b(conv), keys)
	if len(loud) > 0 {
		batch.Queue(`SELECT pg_notify('`+claimsChannel+`', $1)`, notice(conv, loud))
	}
	held, won, err := s.sendClaims(ctx, &batch, len(loud) > 0)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claiming %d entries of %s: %w", len(keys), conv, err)
	}
	out := make([]store.Claim, len(entries))
	for i, e := range entries {
		h, ok := held[e.Key]
		if !ok {
			return nil, fmt.Errorf("postgres store: claiming %q of %s: no entry holds", e.Key, conv)
		}
		out[i] = store.Claim{Seq: h.Seq, Key: e.Key, Value: h.Value, Won: won[e.Key] && string(h.Value) == string(e.Value)}
		if out[i].Won {
			won[e.Key] = false // a key given twice is won once
		}
	}
	return out, nil
}

// sendClaims runs Claim's batch (with its NOTIFY when notified) and
// returns the rows that hold by key and the keys the INSERT stored.
func (s *pgStore) sendClaims(ctx context.Context, batch *pgx.Batch, notified bool) (map[string]store.Claim, map[string]bool, error) {
	br := s.reads.SendBatch(ctx, batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, nil, err
	}
	won := map[string]bool{}
	rows, err := br.Query()
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var k []byte
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, nil, err
		}
		won[string(k)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	held, err := heldClaims(br)
	if err != nil {
		return nil, nil, err
	}
	if notified {
		if _, err := br.Exec(); err != nil { // the NOTIFY
			return nil, nil, err
		}
	}
	return held, won, br.Close()
}

// heldClaims reads the rows of Claim's batch that hold, by key.
func heldClaims(br pgx.BatchResults) (map[string]store.Claim, error) {
	held := map[string]store.Claim{}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c store.Claim
		var k []byte
		if err := rows.Scan(&c.Seq, &k, &c.Value); err != nil {
			return nil, err
		}
		c.Key = string(k)
		held[c.Key] = c
	}
	return held, rows.Err()
}

// Claims implements store.Claimer.
func (s *pgStore) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	rows, err := s.reads.Query(ctx, `SELECT seq, key, value FROM proxy_claims WHERE conv_id = $1 AND seq > $2 ORDER BY seq`, b(conv), after)
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

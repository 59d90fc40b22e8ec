package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/migrate"
)

// savingsMigration adds the proxy's savings ledger (store.Saving), as
// store/sqlite's v10: one row per forwarded model call, independent of
// the conversations (deleting one keeps what was saved on it).
var savingsMigration = migrate.Step{Version: 5, Name: "proxy savings", SQL: `
CREATE TABLE savings (
	id            bigserial PRIMARY KEY,
	at_ns         bigint NOT NULL,
	conv_id       bytea NOT NULL,
	client        bytea NOT NULL,
	project       bytea NOT NULL,
	model         bytea NOT NULL,
	bytes_in      bigint NOT NULL,
	bytes_out     bigint NOT NULL,
	tokens_saved  bigint NOT NULL,
	input_tokens  bigint NOT NULL,
	cached_tokens bigint NOT NULL,
	output_tokens bigint NOT NULL
);
CREATE INDEX savings_by_time ON savings (at_ns);
`}

// AddSaving stores one call's saving.
func (s *pgStore) AddSaving(ctx context.Context, v store.Saving) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO savings (at_ns, conv_id, client, project, model, bytes_in, bytes_out, tokens_saved, input_tokens, cached_tokens, output_tokens)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, v.At.UnixNano(), b(v.Conversation), b(v.Client), b(v.Project), b(v.Model), v.BytesIn, v.BytesOut, v.TokensSaved, v.Input, v.Cached, v.Output)
	if err != nil {
		return fmt.Errorf("postgres store: recording a saving: %w", err)
	}
	return nil
}

// Savings returns the savings stored at or after since, oldest first.
func (s *pgStore) Savings(ctx context.Context, since time.Time) ([]store.Saving, error) {
	var out []store.Saving
	from := int64(0)
	if !since.IsZero() {
		from = since.UnixNano()
	}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, `SELECT at_ns, conv_id, client, project, model, bytes_in, bytes_out, tokens_saved, input_tokens, cached_tokens, output_tokens
FROM savings WHERE at_ns >= $1 ORDER BY at_ns, id`, from)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var v store.Saving
			var at int64
			var conv, client, project, model []byte
			if err := rs.Scan(&at, &conv, &client, &project, &model, &v.BytesIn, &v.BytesOut, &v.TokensSaved, &v.Input, &v.Cached, &v.Output); err != nil {
				return err
			}
			v.At = time.Unix(0, at).UTC()
			v.Conversation, v.Client, v.Project, v.Model = string(conv), string(client), string(project), string(model)
			out = append(out, v)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: reading savings: %w", err)
	}
	return out, nil
}

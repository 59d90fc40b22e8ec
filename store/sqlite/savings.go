package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/migrate"
)

// savingsMigration adds the proxy's savings ledger (store.Saving): one
// row per forwarded model call, independent of the conversations (no
// foreign key: deleting a conversation keeps what was saved on it).
var savingsMigration = migrate.Step{Version: 10, Name: "proxy savings", SQL: `
CREATE TABLE savings (
	id           INTEGER PRIMARY KEY,
	at_ns        INTEGER NOT NULL,
	conv_id      TEXT NOT NULL,
	client       TEXT NOT NULL,
	project      TEXT NOT NULL,
	model        TEXT NOT NULL,
	bytes_in     INTEGER NOT NULL,
	bytes_out    INTEGER NOT NULL,
	tokens_saved INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	cached_tokens INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL
);
CREATE INDEX savings_by_time ON savings (at_ns);
`}

// AddSaving stores one call's saving.
func (s *sqliteStore) AddSaving(ctx context.Context, v store.Saving) error {
	err := s.tx(ctx, func(w *txw) error {
		_, err := w.exec(`INSERT INTO savings (at_ns, conv_id, client, project, model, bytes_in, bytes_out, tokens_saved, input_tokens, cached_tokens, output_tokens)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.At.UnixNano(), v.Conversation, v.Client, v.Project, v.Model, v.BytesIn, v.BytesOut, v.TokensSaved, v.Input, v.Cached, v.Output)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: recording a saving: %w", err)
	}
	return nil
}

// Savings returns the savings stored at or after since, oldest first.
func (s *sqliteStore) Savings(ctx context.Context, since time.Time) ([]store.Saving, error) {
	var out []store.Saving
	from := int64(0)
	if !since.IsZero() {
		from = since.UnixNano()
	}
	err := s.read(ctx, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, `SELECT at_ns, conv_id, client, project, model, bytes_in, bytes_out, tokens_saved, input_tokens, cached_tokens, output_tokens
FROM savings WHERE at_ns >= ? ORDER BY at_ns, id`, from)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var v store.Saving
			var at int64
			if err := rs.Scan(&at, &v.Conversation, &v.Client, &v.Project, &v.Model, &v.BytesIn, &v.BytesOut, &v.TokensSaved, &v.Input, &v.Cached, &v.Output); err != nil {
				return err
			}
			v.At = time.Unix(0, at).UTC()
			out = append(out, v)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: reading savings: %w", err)
	}
	return out, nil
}

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/migrate"
	"github.com/agentharness/harness/store/internal/rows"
)

// recordsMigration is migration 7: the proxy's typed records, its fork
// links (store.Fork) and its decisions about results (store.Decision), as
// store/sqlite's v12. Fork links a proxy stored before as "proxy-fork"
// policy events are copied in; decisions stored as events are read by the
// proxy itself when a conversation has no typed one.
var recordsMigration = migrate.Step{Version: 7, Name: "proxy fork links and result decisions", SQL: `
CREATE TABLE proxy_forks (
	conv_id      bytea PRIMARY KEY,
	parent       bytea NOT NULL,
	turn         integer NOT NULL,
	round        integer NOT NULL,
	shared_turns integer NOT NULL,
	time_ns      bigint NOT NULL DEFAULT 0
);
CREATE TABLE proxy_decisions (
	seq            bigserial PRIMARY KEY,
	conv_id        bytea NOT NULL,
	turn           integer NOT NULL,
	round          integer NOT NULL,
	call_id        bytea NOT NULL,
	tool           bytea NOT NULL,
	content_sha256 bytea NOT NULL,
	decided_by     bytea NOT NULL,
	text           bytea NOT NULL,
	locator        bytea NOT NULL,
	bytes_in       bigint NOT NULL,
	bytes_out      bigint NOT NULL,
	time_ns        bigint NOT NULL DEFAULT 0
);
CREATE INDEX proxy_decisions_by_conv ON proxy_decisions (conv_id, seq);
INSERT INTO proxy_forks (conv_id, parent, turn, round, shared_turns, time_ns)
SELECT conv_id, convert_to(j->'data'->>'parent', 'UTF8'), turn, round, COALESCE((j->'data'->>'shared_turns')::numeric::integer, 0), time_ns
FROM (SELECT id, conv_id, turn, round, time_ns, convert_from(body, 'UTF8')::jsonb AS j FROM events
	WHERE kind = 'policy'::bytea AND position('"proxy-fork"'::bytea IN body) > 0) e
WHERE j->>'policy' = 'proxy-fork' AND COALESCE(j->'data'->>'parent', '') <> ''
ORDER BY id
ON CONFLICT (conv_id) DO NOTHING;
`}

// AddFork implements store.Store.
func (s *pgStore) AddFork(ctx context.Context, f store.Fork) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO proxy_forks (conv_id, parent, turn, round, shared_turns, time_ns) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (conv_id) DO NOTHING`, b(f.Conversation), b(f.Parent), f.Turn, f.Round, f.SharedTurns, codec.NS(f.Time))
	if err != nil {
		return fmt.Errorf("postgres store: fork link of %s: %w", f.Conversation, err)
	}
	return nil
}

// Forks implements store.Store.
func (s *pgStore) Forks(ctx context.Context, conv string) ([]store.Fork, error) {
	q, args := `SELECT `+rows.ForkColumns+` FROM proxy_forks ORDER BY conv_id`, []any(nil)
	if conv != "" {
		q, args = `SELECT `+rows.ForkColumns+` FROM proxy_forks WHERE conv_id = $1`, []any{b(conv)}
	}
	var out []store.Fork
	// One statement sees one snapshot: no transaction, one round trip.
	err := queryIn(ctx, s.reads)(q, args, func(sc rows.Scanner) error {
		f, err := rows.ScanFork(sc)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: fork links: %w", err)
	}
	return out, nil
}

// AddDecisions implements store.Store.
func (s *pgStore) AddDecisions(ctx context.Context, conv string, ds []store.Decision) error {
	if len(ds) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, d := range ds {
			if _, err := tx.Exec(ctx, `INSERT INTO proxy_decisions (conv_id, turn, round, call_id, tool, content_sha256, decided_by, text, locator, bytes_in, bytes_out, time_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, b(conv), d.Turn, d.Round, b(d.CallID), b(d.Tool), b(d.ContentSHA256), b(d.By),
				b(d.Text), b(d.Locator), d.BytesIn, d.BytesOut, codec.NS(d.Time)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres store: decisions of %s: %w", conv, err)
	}
	return nil
}

// Decisions implements store.Store.
func (s *pgStore) Decisions(ctx context.Context, conv string) ([]store.Decision, error) {
	var out []store.Decision
	// One statement: one round trip (a proxy reads them on its requests'
	// path when it first sees a conversation).
	err := queryIn(ctx, s.reads)(`SELECT `+rows.DecisionColumns+` FROM proxy_decisions WHERE conv_id = $1 ORDER BY seq`, []any{b(conv)},
		func(sc rows.Scanner) error {
			d, err := rows.ScanDecision(sc)
			out = append(out, d)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("postgres store: decisions of %s: %w", conv, err)
	}
	return out, nil
}

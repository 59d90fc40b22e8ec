package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/migrate"
	"github.com/agentharness/harness/store/internal/rows"
)

// recordsMigration is migration 12: the proxy's typed records, its fork
// links (store.Fork) and its decisions about results (store.Decision).
// Fork links a proxy stored before as "proxy-fork" policy events are
// copied in; decisions stored as events are read by the proxy itself
// when a conversation has no typed one.
var recordsMigration = migrate.Step{Version: 12, Name: "proxy fork links and result decisions", SQL: `
CREATE TABLE proxy_forks (
	conv_id      TEXT PRIMARY KEY,
	parent       TEXT NOT NULL,
	turn         INTEGER NOT NULL,
	round        INTEGER NOT NULL,
	shared_turns INTEGER NOT NULL,
	time_ns      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE proxy_decisions (
	seq            INTEGER PRIMARY KEY AUTOINCREMENT,
	conv_id        TEXT NOT NULL,
	turn           INTEGER NOT NULL,
	round          INTEGER NOT NULL,
	call_id        TEXT NOT NULL,
	tool           TEXT NOT NULL,
	content_sha256 TEXT NOT NULL,
	decided_by     TEXT NOT NULL,
	text           TEXT NOT NULL,
	locator        TEXT NOT NULL,
	bytes_in       INTEGER NOT NULL,
	bytes_out      INTEGER NOT NULL,
	time_ns        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX proxy_decisions_by_conv ON proxy_decisions (conv_id, seq);
INSERT OR IGNORE INTO proxy_forks (conv_id, parent, turn, round, shared_turns, time_ns)
SELECT conv_id, json_extract(b, '$.data.parent'), turn, round, COALESCE(json_extract(b, '$.data.shared_turns'), 0), time_ns
FROM (SELECT id, conv_id, turn, round, time_ns, CAST(body AS TEXT) AS b FROM events
	WHERE kind = 'policy' AND CAST(body AS TEXT) LIKE '%"proxy-fork"%')
WHERE json_valid(b) AND json_extract(b, '$.policy') = 'proxy-fork' AND COALESCE(json_extract(b, '$.data.parent'), '') <> ''
ORDER BY id;
`}

// AddFork implements store.Store.
func (s *sqliteStore) AddFork(ctx context.Context, f store.Fork) error {
	err := s.tx(ctx, func(w *txw) error {
		_, err := w.exec(`INSERT OR IGNORE INTO proxy_forks (conv_id, parent, turn, round, shared_turns, time_ns) VALUES (?, ?, ?, ?, ?, ?)`,
			f.Conversation, f.Parent, f.Turn, f.Round, f.SharedTurns, codec.NS(f.Time))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: fork link of %s: %w", f.Conversation, err)
	}
	return nil
}

// Forks implements store.Store.
func (s *sqliteStore) Forks(ctx context.Context, conv string) ([]store.Fork, error) {
	q, args := `SELECT `+rows.ForkColumns+` FROM proxy_forks ORDER BY conv_id`, []any(nil)
	if conv != "" {
		q, args = `SELECT `+rows.ForkColumns+` FROM proxy_forks WHERE conv_id = ?`, []any{conv}
	}
	var out []store.Fork
	err := s.read(ctx, func(tx *sql.Tx) error {
		return queryIn(ctx, tx)(q, args, func(sc rows.Scanner) error {
			f, err := rows.ScanFork(sc)
			out = append(out, f)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: fork links: %w", err)
	}
	return out, nil
}

// AddDecisions implements store.Store.
func (s *sqliteStore) AddDecisions(ctx context.Context, conv string, ds []store.Decision) error {
	if len(ds) == 0 {
		return nil
	}
	err := s.tx(ctx, func(w *txw) error {
		for _, d := range ds {
			if _, err := w.exec(`INSERT INTO proxy_decisions (conv_id, turn, round, call_id, tool, content_sha256, decided_by, text, locator, bytes_in, bytes_out, time_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, conv, d.Turn, d.Round, d.CallID, d.Tool, d.ContentSHA256, d.By, d.Text, d.Locator,
				d.BytesIn, d.BytesOut, codec.NS(d.Time)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite store: decisions of %s: %w", conv, err)
	}
	return nil
}

// Decisions implements store.Store.
func (s *sqliteStore) Decisions(ctx context.Context, conv string) ([]store.Decision, error) {
	var out []store.Decision
	err := s.read(ctx, func(tx *sql.Tx) error {
		return queryIn(ctx, tx)(`SELECT `+rows.DecisionColumns+` FROM proxy_decisions WHERE conv_id = ? ORDER BY seq`, []any{conv},
			func(sc rows.Scanner) error {
				d, err := rows.ScanDecision(sc)
				out = append(out, d)
				return err
			})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: decisions of %s: %w", conv, err)
	}
	return out, nil
}

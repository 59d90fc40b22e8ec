package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/rows"
)

// List describes every stored conversation, most recently updated first.
// It reads counts and sizes from the result rows, never the payloads.
func (s *sqliteStore) List(ctx context.Context) ([]store.Summary, error) {
	var out []store.Summary
	err := s.read(ctx, func(tx *sql.Tx) error {
		return query(ctx, tx, rows.ListSQL, nil, func(sc rows.Scanner) error {
			sm, err := rows.ScanSummary(sc)
			out = append(out, sm)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: listing: %w", err)
	}
	return out, nil
}

// Delete removes a conversation with everything stored for it, and calls
// Options.OnDelete (which removes its spill folder) before committing: if
// that fails, nothing is deleted. A conversation a turn is being recorded
// on (by this Store or another) is refused with store.ErrConversationBusy.
func (s *sqliteStore) Delete(ctx context.Context, id string) error {
	if err := s.mine(id, nil); err != nil {
		return err
	}
	return s.write(ctx, func(w *txw) error {
		var n int
		if err := w.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("sqlite store: deleting %s: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite store: deleting %q: %w", id, store.ErrNotFound)
		}
		if err := s.claim(w, id, time.Now()); err != nil {
			return err
		}
		// Children first, explicitly: the foreign keys cascade too, but
		// a file opened without them (an older tool) must not keep orphans.
		for _, table := range []string{"cuts", "result_chunks", "result_bodies", "results", "tool_calls", "messages", "rounds", "turn_context", "turns", "notes", "events", "view_cuts", "leases", "proxy_claims", "proxy_forks", "proxy_decisions"} {
			if _, err := w.exec(`DELETE FROM `+table+` WHERE conv_id = ?`, id); err != nil {
				return fmt.Errorf("sqlite store: deleting %s from %s: %w", id, table, err)
			}
		}
		if _, err := w.exec(`DELETE FROM conversations WHERE id = ?`, id); err != nil {
			return fmt.Errorf("sqlite store: deleting %s: %w", id, err)
		}
		if err := collectRequestGarbage(w); err != nil {
			return fmt.Errorf("sqlite store: deleting %s: its system prompts and tool schemas: %w", id, err)
		}
		if s.opts.OnDelete != nil {
			if err := s.opts.OnDelete(ctx, id); err != nil {
				return fmt.Errorf("sqlite store: deleting %s: removing its files: %w", id, err)
			}
		}
		return nil
	})
}

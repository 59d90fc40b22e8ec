package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/rows"
)

// List describes every stored conversation, most recently updated first.
// It reads counts and sizes from the result rows, never the payloads.
func (s *pgStore) List(ctx context.Context) ([]store.Summary, error) {
	var out []store.Summary
	err := s.read(ctx, func(tx pgx.Tx) error {
		return query(ctx, tx, rows.ListSQL, nil, func(sc rows.Scanner) error {
			sm, err := rows.ScanSummary(sc)
			out = append(out, sm)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: listing: %w", err)
	}
	return out, nil
}

// Delete removes a conversation with everything stored for it, and calls
// Options.OnDelete (which removes its spill folder) before committing: if
// that fails, nothing is deleted. A conversation with a turn in progress
// is refused with store.ErrConversationBusy.
func (s *pgStore) Delete(ctx context.Context, id string) error {
	return s.pooled(ctx, id, func(w *txw) error {
		row, err := w.queryRow(`SELECT COUNT(*) FROM conversations WHERE id = $1`, b(id))
		if err != nil {
			return fmt.Errorf("postgres store: deleting %s: %w", id, err)
		}
		var n int
		if err := row.Scan(&n); err != nil {
			return fmt.Errorf("postgres store: deleting %s: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("postgres store: deleting %q: %w", id, store.ErrNotFound)
		}
		// The foreign keys cascade from conversations; events, view
		// cuts and requests have none (each may come before its
		// conversation or round).
		for _, table := range []string{"events", "view_cuts", "round_requests", "proxy_claims", "proxy_forks", "proxy_decisions", "conversations"} {
			col := "conv_id"
			if table == "conversations" {
				col = "id"
			}
			w.queue("deleting "+id+" from "+table, `DELETE FROM `+table+` WHERE `+col+` = $1`, b(id))
		}
		collectRequestGarbage(w)
		if _, err := w.flush(); err != nil {
			return fmt.Errorf("postgres store: deleting %s: %w", id, err)
		}
		if s.opts.OnDelete != nil {
			if err := s.opts.OnDelete(w.ctx, id); err != nil {
				return fmt.Errorf("postgres store: deleting %s: removing its files: %w", id, err)
			}
		}
		return nil
	})
}

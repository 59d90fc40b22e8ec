package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// List describes every stored conversation, most recently updated first.
// It reads counts and sizes from the result rows, never the payloads.
func (s *Store) List(ctx context.Context) ([]store.Summary, error) {
	var out []store.Summary
	err := s.read(ctx, func(tx pgx.Tx) error {
		return query(ctx, tx, `SELECT c.id, c.title, c.created_ns, c.updated_ns,
	(SELECT COUNT(*) FROM turns t WHERE t.conv_id = c.id),
	(SELECT COUNT(*) FROM notes n WHERE n.conv_id = c.id),
	COALESCE(ro.n, 0), COALESCE(ro.input, 0), COALESCE(ro.cached, 0), COALESCE(ro.cache_write, 0), COALESCE(ro.output, 0),
	COALESCE(re.n, 0), COALESCE(re.bytes, 0), COALESCE(re.model_bytes, 0)
FROM conversations c
LEFT JOIN (SELECT conv_id, COUNT(*) AS n, SUM(input_tokens) AS input, SUM(cached_tokens) AS cached,
		SUM(cache_write_tokens) AS cache_write, SUM(output_tokens) AS output
	FROM rounds GROUP BY conv_id) ro ON ro.conv_id = c.id
LEFT JOIN (SELECT conv_id, COUNT(*) AS n, SUM(bytes) AS bytes, SUM(model_bytes) AS model_bytes
	FROM results GROUP BY conv_id) re ON re.conv_id = c.id
ORDER BY c.updated_ns DESC, c.id`, nil, func(rows pgx.Rows) error {
			var (
				sm               store.Summary
				created, updated int64
			)
			if err := rows.Scan(str{&sm.ID}, str{&sm.Title}, &created, &updated, &sm.Turns, &sm.Notes,
				&sm.Rounds, &sm.Usage.Input, &sm.Usage.Cached, &sm.Usage.CacheWrite, &sm.Usage.Output,
				&sm.Calls, &sm.ResultBytes, &sm.ModelBytes); err != nil {
				return err
			}
			sm.Created, sm.Updated = codec.FromNS(created), codec.FromNS(updated)
			out = append(out, sm)
			return nil
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
func (s *Store) Delete(ctx context.Context, id string) error {
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
		// The foreign keys cascade from conversations; events and view
		// cuts have none (an event may come before its conversation).
		for _, table := range []string{"events", "view_cuts", "conversations"} {
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

package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// List describes every stored conversation, most recently updated first.
// It reads counts and sizes from the result rows, never the payloads.
func (s *Store) List(ctx context.Context) ([]store.Summary, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.id, c.title, c.created_ns, c.updated_ns,
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
ORDER BY c.updated_ns DESC, c.id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: listing: %w", err)
	}
	defer rows.Close()
	var out []store.Summary
	for rows.Next() {
		var (
			sm               store.Summary
			created, updated int64
		)
		if err := rows.Scan(&sm.ID, &sm.Title, &created, &updated, &sm.Turns, &sm.Notes,
			&sm.Rounds, &sm.Usage.Input, &sm.Usage.Cached, &sm.Usage.CacheWrite, &sm.Usage.Output,
			&sm.Calls, &sm.ResultBytes, &sm.ModelBytes); err != nil {
			return nil, fmt.Errorf("sqlite store: listing: %w", err)
		}
		sm.Created, sm.Updated = codec.FromNS(created), codec.FromNS(updated)
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: listing: %w", err)
	}
	return out, nil
}

// Delete removes a conversation with everything stored for it, and calls
// Options.OnDelete (which removes its spill folder) before committing: if
// that fails, nothing is deleted. A conversation a turn is being recorded
// on (by this Store or another) is refused with store.ErrConversationBusy.
func (s *Store) Delete(ctx context.Context, id string) error {
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
		for _, table := range []string{"cuts", "result_chunks", "result_bodies", "results", "tool_calls", "messages", "rounds", "turns", "notes", "events", "view_cuts", "leases"} {
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

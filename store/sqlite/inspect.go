package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/internal/codec"
)

// Calls returns the tool calls of a conversation (of one turn, when turn
// is not 0) with, for each, the sizes of what the tool returned and of the
// model's copy, the guards' cuts and markers, and the per-turn trims of
// every request. It reads no payload.
func (s *Store) Calls(ctx context.Context, convID string, turn int) ([]store.CallRecord, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, convID).Scan(&n); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("sqlite store: conversation %q: %w", convID, store.ErrNotFound)
	}
	var calls codec.Calls
	err = query(ctx, tx, `SELECT r.turn, r.round, r.seq, r.call_id, r.tool, c.args, r.is_error, r.timed_out, r.bytes, r.full_chars,
	r.model_bytes, r.model_chars, r.marker
FROM results r LEFT JOIN tool_calls c ON c.conv_id = r.conv_id AND c.turn = r.turn AND c.round = r.round AND c.dropped = 0 AND c.seq = r.seq
WHERE r.conv_id = ? AND (? = 0 OR r.turn = ?) ORDER BY r.turn, r.round, r.seq`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			c               store.CallRecord
			args            []byte
			isErr, timedOut int
		)
		if err := rows.Scan(&c.Turn, &c.Round, &c.Seq, &c.CallID, &c.Tool, &args, &isErr, &timedOut, &c.FullBytes, &c.FullChars,
			&c.ModelBytes, &c.ModelChars, &c.Marker); err != nil {
			return err
		}
		if args != nil {
			c.Args = json.RawMessage(args)
		}
		c.IsError, c.TimedOut = isErr != 0, timedOut != 0
		calls.Add(c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: calls of %s: %w", convID, err)
	}
	err = query(ctx, tx, `SELECT turn, round, seq, `+cutColumns+` FROM cuts
WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY turn, round, seq, n`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var k resultKey
		c, err := scanCut(rows, &k.turn, &k.round, &k.seq)
		if err != nil {
			return fmt.Errorf("result %d.%d.%d: %w", k.turn, k.round, k.seq, err)
		}
		calls.Cut(k.turn, k.round, k.seq, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: cuts of %s: %w", convID, err)
	}
	err = query(ctx, tx, `SELECT turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker FROM view_cuts
WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY id`, []any{convID, turn, turn}, func(rows *sql.Rows) error {
		var (
			v      store.ViewCut
			callID string
		)
		if err := rows.Scan(&v.Turn, &v.Request, &callID, &v.Kind, &v.By, &v.BytesIn, &v.BytesOut, &v.SizeIn, &v.SizeOut, &v.Unit, &v.Locator, &v.Marker); err != nil {
			return err
		}
		calls.View(callID, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: view cuts of %s: %w", convID, err)
	}
	return calls.Out, nil
}

// Events returns the stored events of a conversation (of one turn, when
// turn is not 0), in the order they were stored.
func (s *Store) Events(ctx context.Context, convID string, turn int) ([]harness.Event, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT body FROM events WHERE conv_id = ? AND (? = 0 OR turn = ?) ORDER BY id`, convID, turn, turn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: events of %s: %w", convID, err)
	}
	defer rows.Close()
	var out []harness.Event
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("sqlite store: events of %s: %w", convID, err)
		}
		var e harness.Event
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("sqlite store: events of %s: %w", convID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: events of %s: %w", convID, err)
	}
	return out, nil
}

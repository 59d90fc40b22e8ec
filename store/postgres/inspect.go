package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	var calls codec.Calls
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := exists(ctx, tx, convID); err != nil {
			return err
		}
		return callsTx(ctx, tx, convID, turn, &calls)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: calls of %s: %w", convID, err)
	}
	return calls.Out, nil
}

func callsTx(ctx context.Context, tx pgx.Tx, convID string, turn int, calls *codec.Calls) error {
	args := []any{b(convID), turn}
	err := query(ctx, tx, `SELECT r.turn, r.round, r.seq, r.call_id, r.tool, c.args, r.is_error, r.timed_out, r.bytes, r.full_chars,
	r.model_bytes, r.model_chars, r.marker
FROM results r LEFT JOIN tool_calls c ON c.conv_id = r.conv_id AND c.turn = r.turn AND c.round = r.round AND NOT c.dropped AND c.seq = r.seq
WHERE r.conv_id = $1 AND ($2 = 0 OR r.turn = $2) ORDER BY r.turn, r.round, r.seq`, args, func(rows pgx.Rows) error {
		var (
			c    store.CallRecord
			argv []byte
		)
		if err := rows.Scan(&c.Turn, &c.Round, &c.Seq, str{&c.CallID}, str{&c.Tool}, &argv, &c.IsError, &c.TimedOut, &c.FullBytes, &c.FullChars,
			&c.ModelBytes, &c.ModelChars, str{&c.Marker}); err != nil {
			return err
		}
		if argv != nil {
			c.Args = json.RawMessage(argv)
		}
		calls.Add(c)
		return nil
	})
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	err = query(ctx, tx, `SELECT turn, round, seq, `+cutColumns+` FROM cuts
WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) ORDER BY turn, round, seq, n`, args, func(rows pgx.Rows) error {
		var k [3]int
		c, err := scanCut(rows, &k[0], &k[1], &k[2])
		if err != nil {
			return fmt.Errorf("result %d.%d.%d: %w", k[0], k[1], k[2], err)
		}
		calls.Cut(k[0], k[1], k[2], c)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cuts: %w", err)
	}
	err = query(ctx, tx, `SELECT turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker FROM view_cuts
WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) ORDER BY id`, args, func(rows pgx.Rows) error {
		var (
			v      store.ViewCut
			callID string
		)
		if err := rows.Scan(&v.Turn, &v.Request, str{&callID}, str{(*string)(&v.Kind)}, str{&v.By}, &v.BytesIn, &v.BytesOut,
			&v.SizeIn, &v.SizeOut, str{&v.Unit}, str{&v.Locator}, str{&v.Marker}); err != nil {
			return err
		}
		calls.View(callID, v)
		return nil
	})
	if err != nil {
		return fmt.Errorf("view cuts: %w", err)
	}
	return nil
}

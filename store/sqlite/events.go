package sqlite

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/codec"
)

// Observe stores one event. Use harness.Observer(s.Observe) as
// harness.Options.Observer.
//
// Events are committed with the next transcript write (the round or turn
// end they belong to), when 256 are waiting, or by Close: a run
// does not pay a transaction per event, and an event is never stored
// without the round it describes. Events and Calls flush first. A turn's
// turn_end is stored once: a second copy, which a driver that retries a
// failed end write emits while the failed write's copy waits for the next
// write, is dropped (see store.Store.Observe).
//
// Policy events that carry a view-only cut of one result (a turn budget's
// trim, a compaction's clearing) are also indexed as view cuts, which is
// how "harness log show" tells what the model saw of a result in each
// request. A write error goes to Options.OnEventError and EventErr; it
// never stops a run.
func (s *sqliteStore) Observe(e harness.Event) { s.events.Observe(e, s.flush) }

// flush writes the events still waiting for a transcript write.
func (s *sqliteStore) flush(ctx context.Context) error {
	if !s.events.Waiting() {
		return nil
	}
	return s.write(ctx, func(*txw) error { return nil })
}

// writeEvents inserts events in w's transaction. Their keys are not
// stored: SQLite commits in this process, so a commit that failed did not
// happen, and no reply can be lost after it did (the PostgreSQL store
// keys its events for that).
func writeEvents(w *txw, events []codec.Queued) error {
	for _, q := range events {
		if err := writeEvent(w, q.Event); err != nil {
			return err
		}
	}
	return nil
}

func writeEvent(w *txw, e harness.Event) error {
	body, err := codec.EventBody(e)
	if err != nil {
		return fmt.Errorf("sqlite store: %w", err)
	}
	query, args := `INSERT INTO events (conv_id, turn, round, kind, time_ns, body) VALUES (?, ?, ?, ?, ?, ?)`,
		[]any{e.Conversation, e.Turn, e.Round, string(e.Kind), e.Time.UnixNano(), body}
	if codec.OncePerTurn(e) {
		query = `INSERT INTO events (conv_id, turn, round, kind, time_ns, body) SELECT ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM events WHERE conv_id = ? AND turn = ? AND kind = ?)`
		args = append(args, e.Conversation, e.Turn, string(e.Kind))
	}
	res, err := w.exec(query, args...)
	if err != nil {
		return fmt.Errorf("sqlite store: event %s: %w", e.Kind, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return nil // a copy of the turn's end is stored already
	}
	for _, v := range codec.ViewCuts(e) {
		c := v.Cut
		if _, err := w.exec(`INSERT INTO view_cuts (conv_id, turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.Conversation, v.Turn, v.Request, v.CallID, string(c.Kind), c.By, c.BytesIn, c.BytesOut,
			v.SizeIn, v.SizeOut, v.Unit, c.Locator, v.Marker); err != nil {
			return fmt.Errorf("sqlite store: view cut of %s: %w", v.CallID, err)
		}
	}
	return nil
}

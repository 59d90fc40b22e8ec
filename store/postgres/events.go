package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/rows"
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
func (s *pgStore) Observe(e harness.Event) { s.events.Observe(e, s.flush) }

// flush writes the events still waiting for a transcript write.
func (s *pgStore) flush(ctx context.Context) error {
	if !s.events.Waiting() {
		return nil
	}
	return s.pooled(ctx, "", func(*txw) error { return nil })
}

// queueEvents queues the inserts of events and of the view cuts they
// carry. Each row carries its event's queue key, and one already stored
// under that key is not stored again: a write whose COMMIT the server
// committed but whose reply never came back requeued its events, and the
// next write brings them again. The unique indexes (not a WHERE NOT
// EXISTS) also cover a COMMIT still running on a session the client gave
// up on: the insert waits for that transaction, then stores the row only
// if it rolled back.
func queueEvents(w *txw, events []codec.Queued) error {
	for _, q := range events {
		e := q.Event
		body, err := codec.EventBody(e)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("event %s", e.Kind)
		if codec.OncePerTurn(e) {
			// The view cuts below are of policy events, never of these.
			w.queue(label, `INSERT INTO events (conv_id, turn, round, kind, time_ns, body, event_key)
SELECT $1::bytea, $2::integer, $3::integer, $4::bytea, $5::bigint, $6::bytea, $7::bytea
WHERE NOT EXISTS (SELECT 1 FROM events WHERE conv_id = $1::bytea AND turn = $2::integer AND kind = $4::bytea)
ON CONFLICT (event_key) WHERE event_key IS NOT NULL DO NOTHING`,
				b(e.Conversation), e.Turn, e.Round, b(string(e.Kind)), e.Time.UnixNano(), body, q.Key[:])
			continue
		}
		w.queue(label, `INSERT INTO events (conv_id, turn, round, kind, time_ns, body, event_key) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (event_key) WHERE event_key IS NOT NULL DO NOTHING`,
			b(e.Conversation), e.Turn, e.Round, b(string(e.Kind)), e.Time.UnixNano(), body, q.Key[:])
		for i, v := range codec.ViewCuts(e) {
			c := v.Cut
			w.queue("view cut of "+v.CallID, `INSERT INTO view_cuts (conv_id, turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker, event_key, event_cut)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (event_key, event_cut) WHERE event_key IS NOT NULL DO NOTHING`, b(v.Conversation), v.Turn, v.Request, b(v.CallID), b(string(c.Kind)), b(c.By),
				c.BytesIn, c.BytesOut, v.SizeIn, v.SizeOut, b(v.Unit), b(c.Locator), b(v.Marker), q.Key[:], i)
		}
	}
	return nil
}

// Events returns the stored events of a conversation (of one turn, when
// turn is not 0), in the order they were stored.
func (s *pgStore) Events(ctx context.Context, convID string, turn int) ([]harness.Event, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	var out []harness.Event
	err := s.read(ctx, func(tx pgx.Tx) error {
		return query(ctx, tx, `SELECT body FROM events WHERE conv_id = $1 AND ($2 = 0 OR turn = $2) ORDER BY id`, []any{b(convID), turn},
			func(sc rows.Scanner) error {
				e, err := rows.ScanEvent(sc)
				out = append(out, e)
				return err
			})
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: events of %s: %w", convID, err)
	}
	return out, nil
}

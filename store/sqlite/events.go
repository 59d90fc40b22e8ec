package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentharness/harness"
)

// maxPending is how many events wait for the next transcript write before
// they are written on their own.
const maxPending = 256

// Observe stores one event. Use harness.Observer(s.Observe), or Observer
// to chain another observer, as harness.Options.Observer.
//
// Events are committed with the next transcript write (the round or turn
// end they belong to), when 256 are waiting, or by Flush and Close: a run
// does not pay a transaction per event, and an event is never stored
// without the round it describes. Events and Calls flush first.
//
// Policy events that carry a view-only cut of one result (a turn budget's
// trim, a compaction's clearing) are also indexed as view cuts, which is
// how "harness log show" tells what the model saw of a result in each
// request. A write error goes to Options.OnEventError and EventErr; it
// never stops a run.
func (s *Store) Observe(e harness.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	s.pmu.Lock()
	s.pending = append(s.pending, e)
	n := len(s.pending)
	s.pmu.Unlock()
	if n >= maxPending {
		if err := s.Flush(context.Background()); err != nil {
			s.reportEventErr(err)
		}
	}
}

// Observer returns an observer that stores each event and then passes it
// to next (which may be nil).
func (s *Store) Observer(next harness.Observer) harness.Observer {
	return func(e harness.Event) {
		s.Observe(e)
		if next != nil {
			next(e)
		}
	}
}

// Flush writes the events still waiting for a transcript write.
func (s *Store) Flush(ctx context.Context) error {
	s.pmu.Lock()
	n := len(s.pending)
	s.pmu.Unlock()
	if n == 0 {
		return nil
	}
	return s.write(ctx, func(*txw) error { return nil })
}

func (s *Store) takePending() []harness.Event {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// requeue puts back events whose transaction failed, ahead of newer ones.
func (s *Store) requeue(events []harness.Event) {
	if len(events) == 0 {
		return
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.pending = append(events, s.pending...)
}

func (s *Store) reportEventErr(err error) {
	s.mu.Lock()
	if s.eventErr == nil {
		s.eventErr = err
	}
	s.mu.Unlock()
	if s.opts.OnEventError != nil {
		s.opts.OnEventError(err)
	}
}

// writeEvents inserts events in w's transaction.
func writeEvents(w *txw, events []harness.Event) error {
	for _, e := range events {
		if err := writeEvent(w, e); err != nil {
			return err
		}
	}
	return nil
}

func writeEvent(w *txw, e harness.Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		// Invalid JSON arguments or an unencodable figure must not cost
		// the event: keep them in printed form.
		body, err = json.Marshal(printable(e))
		if err != nil {
			return fmt.Errorf("sqlite store: event %s: %w", e.Kind, err)
		}
	}
	if _, err := w.exec(`INSERT INTO events (conv_id, turn, round, kind, time_ns, body) VALUES (?, ?, ?, ?, ?, ?)`,
		e.Conversation, e.Turn, e.Round, string(e.Kind), e.Time.UnixNano(), body); err != nil {
		return fmt.Errorf("sqlite store: event %s: %w", e.Kind, err)
	}
	if e.Kind != harness.EventPolicy || e.Call == nil || e.Result == nil {
		return nil
	}
	for _, c := range e.Result.Cuts {
		if c.Kind != harness.CutTrimmed && c.Kind != harness.CutCleared {
			continue // a guard's cut: it is stored with the result
		}
		unit, _ := e.Data["unit"].(string)
		marker, _ := e.Data["marker"].(string)
		if _, err := w.exec(`INSERT INTO view_cuts (conv_id, turn, request, call_id, kind, by, bytes_in, bytes_out, size_in, size_out, unit, locator, marker)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.Conversation, e.Turn, e.Round, e.Call.ID, string(c.Kind), c.By, c.BytesIn, c.BytesOut,
			dataInt(e.Data, "size_in"), dataInt(e.Data, "size_out"), unit, c.Locator, marker); err != nil {
			return fmt.Errorf("sqlite store: view cut of %s: %w", e.Call.ID, err)
		}
	}
	return nil
}

// printable returns e with the call's arguments as a JSON string when they
// are not valid JSON, and Data values JSON cannot carry printed.
func printable(e harness.Event) harness.Event {
	if e.Call != nil && !json.Valid(e.Call.Args) {
		c := *e.Call
		quoted, _ := json.Marshal(string(c.Args))
		c.Args = quoted
		e.Call = &c
	}
	if e.Data != nil {
		var d map[string]any
		if err := json.Unmarshal(encodeMeta(e.Data), &d); err == nil {
			e.Data = d
		}
	}
	return e
}

// dataInt reads an integer figure of an event's Data, whether it is still a
// Go int or came through JSON as a float.
func dataInt(d map[string]any, key string) int {
	switch v := d[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}

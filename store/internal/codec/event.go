package codec

import (
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
)

// EventBody encodes an event as a store keeps it. Invalid JSON arguments
// or a figure JSON cannot carry must not cost the event: they are kept in
// printed form (see Printable).
func EventBody(e harness.Event) ([]byte, error) {
	body, err := json.Marshal(e)
	if err == nil {
		return body, nil
	}
	body, err = json.Marshal(Printable(e))
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.Kind, err)
	}
	return body, nil
}

// OncePerTurn reports whether a store keeps at most one event like e per
// turn: EventTurnEnd of a named turn, since a store records one end per
// turn. A driver that retries a failed end write emits the event again
// (a durable turn's EndTurn step, which Temporal retries), while the
// failed write's copy waits, requeued, for the next write: both would be
// stored. The store drops the later copy instead of the driver holding the
// event back, which would move it out of the transaction that records the
// end (and lose it when the worker died between the two); the store
// cannot tell which failed writes a caller will retry, so it keys on what
// the event says.
func OncePerTurn(e harness.Event) bool {
	return e.Kind == harness.EventTurnEnd && e.Turn > 0
}

// Printable returns e with the call's arguments as a JSON string when they
// are not valid JSON, and Data values JSON cannot carry printed.
func Printable(e harness.Event) harness.Event {
	if e.Call != nil && !json.Valid(e.Call.Args) {
		c := *e.Call
		quoted, _ := json.Marshal(string(c.Args))
		c.Args = quoted
		e.Call = &c
	}
	if e.Data != nil {
		var d map[string]any
		if err := json.Unmarshal(EncodeMeta(e.Data), &d); err == nil {
			e.Data = d
		}
	}
	return e
}

// DataInt reads an integer figure of an event's Data, whether it is still a
// Go int or came through JSON as a float.
func DataInt(d map[string]any, key string) int {
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

// ViewCut is one view-only cut an event reports: what a per-turn policy
// (a turn budget's trim, a compaction's clearing) did to one result in one
// request.
type ViewCut struct {
	Cut             harness.Cut
	SizeIn, SizeOut int
	Unit, Marker    string
	CallID          string
	Turn, Request   int
	Conversation    string
}

// ViewCuts returns the view-only cuts e carries: none unless it is a
// policy event about one result; a guard's cut is stored with the result.
func ViewCuts(e harness.Event) []ViewCut {
	if e.Kind != harness.EventPolicy || e.Call == nil || e.Result == nil {
		return nil
	}
	var out []ViewCut
	for _, c := range e.Result.Cuts {
		if c.Kind != harness.CutTrimmed && c.Kind != harness.CutCleared {
			continue
		}
		unit, _ := e.Data["unit"].(string)
		marker, _ := e.Data["marker"].(string)
		out = append(out, ViewCut{Cut: c, SizeIn: DataInt(e.Data, "size_in"), SizeOut: DataInt(e.Data, "size_out"),
			Unit: unit, Marker: marker, CallID: e.Call.ID, Turn: e.Turn, Request: e.Round, Conversation: e.Conversation})
	}
	return out
}

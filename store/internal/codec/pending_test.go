package codec

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentharness/harness"
)

// TestEventKeys queues events in two queues: every event gets a key no
// other event of either queue has, and a failed write's events come back
// from Requeue ahead of newer ones with the keys they were given, so a
// store can tell them from new events.
func TestEventKeys(t *testing.T) {
	var a, b Events
	ev := func(i int) harness.Event { return harness.Event{Kind: harness.EventRequest, Detail: fmt.Sprint(i)} }
	a.Add(ev(1))
	a.Add(ev(2))
	b.Add(ev(1))
	first := a.Take()
	a.Add(ev(3))
	a.Requeue(first)
	got := a.Take()
	var details []string
	for _, q := range got {
		details = append(details, q.Event.Detail)
	}
	if !slices.Equal(details, []string{"1", "2", "3"}) {
		t.Fatalf("after a requeue: %q, want 1, 2, 3", details)
	}
	for i, q := range first {
		if got[i].Key != q.Key {
			t.Errorf("event %s: key %x after the requeue, %x before", q.Event.Detail, got[i].Key, q.Key)
		}
	}
	seen := map[[16]byte]string{}
	for _, q := range append(got, b.Take()...) {
		if q.Event.Time.IsZero() {
			t.Errorf("event %s queued without a time", q.Event.Detail)
		}
		if other, dup := seen[q.Key]; dup {
			t.Errorf("events %s and %s share key %x", other, q.Event.Detail, q.Key)
		}
		seen[q.Key] = q.Event.Detail
	}
	if a.Waiting() {
		t.Error("events wait after Take")
	}
}

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

// TestPendingIsBounded: requests whose rounds another process stored are
// forgotten once a later round of their turn is taken, and past
// MaxPending the oldest request goes first, so a process that makes
// requests whose rounds another process records does not grow without
// bound.
func TestPendingIsBounded(t *testing.T) {
	var p Pending
	conv := &harness.Conversation{ID: "c"}
	turn := &harness.Turn{Index: 1}
	for round := 1; round <= 3; round++ {
		if err := p.Add(conv, turn, &harness.Request{Turn: 1, Round: round, System: fmt.Sprint("system ", round)}); err != nil {
			t.Fatal(err)
		}
	}
	p.Put("other", 1, 1, &Request{System: "other"})
	if r := p.Take("c", 1, 3); r == nil || r.System != "system 3" {
		t.Fatalf("Take of round 3: %+v", r)
	}
	if r := p.Take("c", 1, 1); r != nil {
		t.Errorf("round 1's request outlived the take of round 3: %+v", r)
	}
	if p.Len() != 1 || p.Take("other", 1, 1) == nil {
		t.Errorf("another conversation's request was dropped: %d left", p.Len())
	}

	for i := range MaxPending + 10 {
		p.Put(fmt.Sprint("conv ", i), 1, 1, &Request{System: fmt.Sprint(i)})
	}
	if p.Len() != MaxPending {
		t.Fatalf("%d requests kept, want at most %d", p.Len(), MaxPending)
	}
	for i := range 10 {
		if r := p.Take(fmt.Sprint("conv ", i), 1, 1); r != nil {
			t.Errorf("conv %d: the oldest requests should have gone first", i)
		}
	}
	if r := p.Take(fmt.Sprint("conv ", MaxPending+9), 1, 1); r == nil {
		t.Error("the newest request was dropped")
	}
	p.Put("conv 10", 1, 1, &Request{System: "again"})
	if p.Len() != MaxPending-1 {
		t.Errorf("replacing a kept request changed the count to %d", p.Len())
	}
}

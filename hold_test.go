package harness_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentharness/harness"
)

// eventLog is an Observer that keeps what it receives, safe for
// concurrent use.
type eventLog struct {
	mu  sync.Mutex
	got []harness.Event
}

func (l *eventLog) observe(e harness.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, e)
}

// describe lists the kinds, policies and details of what l received.
func (l *eventLog) describe() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.got {
		out = append(out, fmt.Sprintf("%s %s %s", e.Kind, e.Policy, e.Detail))
	}
	return out
}

// heldEngine is an engine observed by log whose one view policy reports
// an event through Emit, as policies do.
func heldEngine(t *testing.T, log *eventLog) *harness.Engine {
	t.Helper()
	report := harness.ViewPolicyFunc(func(ctx context.Context, v *harness.View) error {
		harness.Emit(ctx, harness.Event{Kind: harness.EventPolicy, Policy: "test", Detail: fmt.Sprintf("view of round %d", v.Round)})
		return nil
	})
	eng, err := harness.NewEngine(&harness.Options{Observer: log.observe, Policies: []harness.ViewPolicy{report}})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestHoldEvents: the events an engine's steps report under HoldEvents'
// context, its own (EventRequest) and a policy's (Emit), reach the
// observer only on release, in the order reported and with their fields
// unchanged; later ones pass straight through; a hold never released
// drops its events; and steps outside the held context are not held.
func TestHoldEvents(t *testing.T) {
	ctx := context.Background()
	log := &eventLog{}
	eng := heldEngine(t, log)
	conv := harness.NewConversation("c")
	turn, err := eng.BeginTurn(ctx, conv, "hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"turn_start  hi"}
	if got := log.describe(); !slices.Equal(got, want) {
		t.Fatalf("before any hold: %q, want %q", got, want)
	}

	dropped, _ := eng.HoldEvents(ctx)
	if _, _, err := eng.Request(dropped, conv, turn, nil, false, false); err != nil {
		t.Fatal(err)
	}
	held, release := eng.HoldEvents(ctx)
	if _, _, err := eng.Request(held, conv, turn, nil, false, false); err != nil {
		t.Fatal(err)
	}
	if got := log.describe(); !slices.Equal(got, want) {
		t.Fatalf("held: the observer received %q, want only %q", got, want)
	}
	release()
	want = append(want, "policy test view of round 1", "request  ")
	if got := log.describe(); !slices.Equal(got, want) {
		t.Fatalf("released: %q, want %q", got, want)
	}
	if e := log.got[2]; e.Conversation != "c" || e.Turn != 1 || e.Round != 1 || e.Stats == nil || e.Time.IsZero() {
		t.Errorf("the released request event lost its fields: %+v", e)
	}
	if _, err := eng.View(held, conv, turn, nil, false, false); err != nil {
		t.Fatal(err)
	}
	release()
	want = append(want, "policy test view of round 1")
	if got := log.describe(); !slices.Equal(got, want) {
		t.Fatalf("after release: %q, want %q (a later event passed once, a second release adding nothing)", got, want)
	}
}

// TestHoldEventsScope: a hold belongs to its engine, so another engine
// under the held context (an agent run by a tool) reports to its own
// observer at once; a hold inside a hold of the same engine releases into
// the outer one; and events reported while the hold is released, from
// other goroutines, all arrive once.
func TestHoldEventsScope(t *testing.T) {
	ctx := context.Background()
	outerLog, innerLog := &eventLog{}, &eventLog{}
	outer, inner := heldEngine(t, outerLog), heldEngine(t, innerLog)
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "hi"}
	conv.Turns = append(conv.Turns, turn)

	held, release := outer.HoldEvents(ctx)
	if _, err := inner.View(held, conv, turn, nil, false, false); err != nil {
		t.Fatal(err)
	}
	if got := innerLog.describe(); len(got) != 1 {
		t.Errorf("another engine under the held context reported %q to its observer, want its one event", got)
	}
	nested, releaseNested := outer.HoldEvents(held)
	if _, err := outer.View(nested, conv, turn, nil, false, false); err != nil {
		t.Fatal(err)
	}
	releaseNested()
	if got := outerLog.describe(); len(got) != 0 {
		t.Fatalf("the nested hold released past the outer one: %q", got)
	}
	const n = 8
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := outer.View(held, conv, turn, nil, false, false); err != nil {
				t.Error(err)
			}
		}()
	}
	release()
	wg.Wait()
	if got := outerLog.describe(); len(got) != n+1 {
		t.Errorf("the outer observer received %d events, want %d (the nested hold's and one per view): %q", len(got), n+1, got)
	}
}

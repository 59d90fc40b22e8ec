package storetest

import (
	"context"
	"github.com/agentharness/harness/store/internal/storefix"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// testRoundAnswerTimes runs a turn recorded into the store on a fake
// clock that a tool advances: each loaded round carries the clock's time
// at its response (Round.Answered) and the turn its start and end, so
// the next request built from the loaded conversation is idle since the
// last response.
func testRoundAnswerTimes(t *testing.T, be *Backend) {
	ctx := context.Background()
	s := be.open(t, nil)
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	var (
		mu  sync.Mutex
		now = t0
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	wait := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	slow := storefix.FetchTool()
	fetch := slow.Func
	slow.Func = func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		wait(time.Minute) // each fetch takes a minute
		return fetch(ctx, call)
	}
	a, err := harness.New(storefix.ToolModel(nil, nil), &harness.Options{System: "sys", Tools: []harness.Tool{slow}, Recorder: s, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_answered")
	if _, err := a.Run(ctx, conv, "fetch both"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	turn := got.Turns[0]
	// Round 1 answered at t0 and its two fetches took two minutes.
	want := []time.Time{t0, t0.Add(2 * time.Minute)}
	if len(turn.Rounds) != len(want) {
		t.Fatalf("%d rounds stored, want %d", len(turn.Rounds), len(want))
	}
	for i, r := range turn.Rounds {
		if !r.Answered.Equal(want[i]) {
			t.Errorf("round %d: Answered %v, want %v", r.Index, r.Answered, want[i])
		}
	}
	if !turn.Started.Equal(t0) || !turn.Ended.Equal(want[1]) {
		t.Errorf("turn: Started %v Ended %v, want %v and %v (the engine's clock)", turn.Started, turn.Ended, t0, want[1])
	}
	// Another process takes the conversation an hour later.
	wait(time.Hour)
	eng, err := harness.NewEngine(&harness.Options{System: "sys", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	v, err := eng.View(ctx, got, got.Turns[0], nil, false, false)
	if err != nil || v.Idle != time.Hour {
		t.Errorf("view of the loaded conversation: Idle %s, %v; want 1h since the last response", v.Idle, err)
	}
}

package proxy

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// clearEventsHidden is a store whose events leave out the idle clears:
// a proxy restarted on it can restore them from the typed decisions
// only.
type clearEventsHidden struct{ store.DB }

func (s clearEventsHidden) Events(ctx context.Context, conv string, turn int) ([]harness.Event, error) {
	events, err := s.DB.Events(ctx, conv, turn)
	return slices.DeleteFunc(events, func(e harness.Event) bool { return e.Policy == idleClearBy }), err
}

// eventsOnly is a store as a proxy that kept its clears only as policy
// events wrote it: no typed decision is recorded.
type eventsOnly struct{ store.DB }

func (eventsOnly) AddDecisions(context.Context, string, []store.Decision) error { return nil }

// TestIdleClearRestored: a proxy restarted after an idle clear sends every
// cleared result with the placeholder it was sent with, read back from the
// typed decisions (with the clear events out of sight), and from the clear
// events of a store a proxy wrote before decisions were typed.
func TestIdleClearRestored(t *testing.T) {
	cases := []struct {
		name            string
		first, restart  func(store.DB) store.Store
		typedDecisionsN int
	}{
		{"from the typed decisions", func(s store.DB) store.Store { return s }, func(s store.DB) store.Store { return clearEventsHidden{s} }, 3},
		{"from an old store's events", func(s store.DB) store.Store { return eventsOnly{s} }, func(s store.DB) store.Store { return s }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := newIdleRun(t, wireCases[0], nil, nil)
			x.r.px.opts.Store = tc.first(x.r.st)
			x.warmUp()
			shown := x.shownResults(x.send(8, 6*time.Minute))
			if err := x.r.px.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			list, err := x.r.st.List(context.Background())
			if err != nil || len(list) != 1 {
				t.Fatalf("store: %d conversations (%v)", len(list), err)
			}
			ds, err := x.r.st.Decisions(context.Background(), list[0].ID)
			if err != nil || len(ds) != tc.typedDecisionsN {
				t.Fatalf("%d typed decisions stored (%v), want %d", len(ds), err, tc.typedDecisionsN)
			}
			for _, d := range ds {
				if d.By != idleClearBy || d.Locator == "" || d.ContentSHA256 == "" || !slices.Contains(shown, d.Text) {
					t.Errorf("decision %+v: not the clear that was sent", d)
				}
			}
			px2 := x.restartOn(tc.restart(x.r.st))
			again := x.shownResults(x.send(9, 30*time.Second))
			for _, i := range []int{0, 2, 3} {
				if again[i] != shown[i] {
					t.Errorf("after a restart, cleared result %d is sent otherwise:\n%.200s", i+1, again[i])
				}
			}
			if st := px2.Stats(); st.CacheBreaks != 0 {
				t.Errorf("%d cache breaks after the restart, want 0", st.CacheBreaks)
			}
			if err := px2.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

package policy

import (
	"context"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// thirdOf is a guard that shows the model the first third of every
// result, as a ceiling would: a saving made at arrival, which keeps every
// request append-only.
func thirdOf(next harness.ToolFunc) harness.ToolFunc {
	return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		res, err := next(ctx, call)
		if err == nil && res != nil {
			text := res.ModelText()
			res.Model = []harness.Part{harness.TextPart(text[:len(text)/3])}
		}
		return res, err
	}
}

// priced is what usage u costs under p.
func priced(p CachePrice, u harness.Usage) float64 {
	return p.Uncached*float64(u.Input-u.Cached) + p.Cached*float64(u.Cached)
}

// TestCompactBankBoundsClearsForCost runs the same conversation of many
// reads far below the window with and without savings to draw on: a clear
// for cost happens only when what the run saved so far covers its cache
// miss under every price, and the run never costs more than keeping
// everything (no guard, no clearing) under any price. Without the bank the
// clears are made on expectation alone.
func TestCompactBankBoundsClearsForCost(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	const n, size = 40, 1500
	_, _, _, none := clearOldRun(t, n, size, &CompactPolicy{Window: 1 << 20, Counter: c, NoClearOld: true})
	for _, tc := range []struct {
		name       string
		policy     *CompactPolicy
		guards     []harness.Guard
		wantClears bool
	}{
		// Every result whole: nothing is saved, so no clear is covered.
		{"nothing saved", &CompactPolicy{Window: 1 << 20, Counter: c}, nil, false},
		// A ceiling at arrival saves two thirds of every result: that pays
		// for clears.
		{"saved at arrival", &CompactPolicy{Window: 1 << 20, Counter: c, ClearOld: 3000}, []harness.Guard{thirdOf}, true},
		{"unbounded", &CompactPolicy{Window: 1 << 20, Counter: c, Unbounded: true}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, evs, _, usage := clearOldRun(t, n, size, tc.policy, tc.guards...)
			if got := len(evs) > 0; got != tc.wantClears {
				t.Fatalf("%d clears, want clears: %v", len(evs), tc.wantClears)
			}
			if tc.policy.Unbounded {
				return
			}
			for _, p := range defaultCompactPrices() {
				if w, k := priced(p, usage), priced(p, none); w > k+1e-9 {
					t.Errorf("under %s the run cost %.1f, keeping everything %.1f", p.Name, w, k)
				}
			}
		})
	}
}

// A window clear the bank cannot cover waits while the request still
// fits the window, and is made once it does not: a policy that has seen
// none of a conversation's earlier requests has nothing banked.
func TestCompactBankHoldsBackTheWindowWhileTheRequestFits(t *testing.T) {
	conv := compactConv([]int{12}, 1000)
	counter := tokens.NewCache(o200k(t), nil)
	size := float64(tokens.CountRequest(counter, harness.BuildView(conv, conv.Turns[0], "sys", nil, false).Request(0)))
	for _, tc := range []struct {
		name        string
		window      int
		wantCleared bool
	}{
		{"above HighWater, fits", int(size / 0.8), false},
		{"does not fit", int(size * 0.9), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
			if err := (&CompactPolicy{Window: tc.window, Counter: counter}).ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			cleared := false
			for _, o := range v.Origins {
				cleared = cleared || compactCleared(o)
			}
			if cleared != tc.wantCleared {
				t.Fatalf("cleared %v, want %v", cleared, tc.wantCleared)
			}
		})
	}
}

// A request built again (a retry after an overflow, the proxy admitting
// it twice) is booked once: the bank only adds a request when the next
// one is built, and a conversation that goes back to an earlier request
// starts again from nothing.
func TestCompactBankBooksEachRequestOnce(t *testing.T) {
	conv := compactConv([]int{6}, 400)
	// One result was cut at arrival: every request saves on it.
	conv.Turns[0].Rounds[0].Results[0].Model = []harness.Part{harness.TextPart("cut")}
	counter := tokens.NewCache(o200k(t), nil)
	var b books
	view := func() *harness.View { return harness.BuildView(conv, conv.Turns[0], "sys", nil, false) }
	k := b.open(conv, 1, counter, defaultCompactPrices(), false, false)
	k.book(view())
	k = b.open(conv, 2, counter, defaultCompactPrices(), false, false)
	once := append([]float64(nil), k.saved...)
	if once[0] <= 0 {
		t.Fatalf("request 1 saved %v on a cut result", once)
	}
	for range 3 {
		k = b.open(conv, 2, counter, defaultCompactPrices(), false, false)
		k.book(view())
	}
	if k.saved[0] != once[0] {
		t.Fatalf("rebuilding request 2 changed the bank: %v → %v", once, k.saved)
	}
	if k = b.open(conv, 1, counter, defaultCompactPrices(), false, false); k.saved[0] != 0 || k.index != 1 {
		t.Fatalf("going back did not start a new bank: %+v", k.saved)
	}
	if k = b.open(harness.NewConversation("other"), 5, counter, defaultCompactPrices(), false, false); !k.late || k.covers(view()) {
		t.Fatal("a conversation first seen at its fifth request covers a clear")
	}
}

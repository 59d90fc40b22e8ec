package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentharness/harness/store"
)

// testClaims: several stores on one database claim the same keys at
// once; each key holds the value of exactly one of them, every store gets
// that value back, a reader following Seq sees every entry once and in
// order, and deleting the conversation deletes its entries.
func testClaims(t *testing.T, be *Backend) {
	ctx := context.Background()
	const writers, keys = 4, 20
	stores := make([]store.Claimer, writers)
	for i := range stores {
		stores[i] = be.open(t, nil)
	}
	got := make([][]store.Claim, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			// Writer w claims the keys w+1 at a time.
			for k := 0; k < keys; k += w + 1 {
				var batch []store.Claim
				for j := k; j < min(k+w+1, keys); j++ {
					batch = append(batch, store.Claim{Key: fmt.Sprintf("key-%02d", j), Value: fmt.Appendf(nil, "from %d", w)})
				}
				cs, err := stores[w].Claim(ctx, "conv-1", batch)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) != len(batch) {
					t.Errorf("a claim of %d entries returned %d", len(batch), len(cs))
					return
				}
				got[w] = append(got[w], cs...)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for k := range keys {
		won := 0
		for w := range writers {
			if got[w][k].Won {
				won++
			}
			if string(got[w][k].Value) != string(got[0][k].Value) || got[w][k].Seq != got[0][k].Seq {
				t.Errorf("key %d: store %d got %q (seq %d), store 0 %q (seq %d)", k, w, got[w][k].Value, got[w][k].Seq, got[0][k].Value, got[0][k].Seq)
			}
		}
		if won != 1 {
			t.Errorf("key %d: %d stores won it, want 1", k, won)
		}
	}
	// A key given twice in one claim holds its first value, won once.
	twice, err := stores[0].Claim(ctx, "conv-3", []store.Claim{{Key: "k", Value: []byte("a")}, {Key: "k", Value: []byte("b")}})
	if err != nil || len(twice) != 2 || string(twice[0].Value) != "a" || string(twice[1].Value) != "a" || !twice[0].Won || twice[1].Won {
		t.Errorf("a key given twice: %+v (%v); want \"a\" twice, won once", twice, err)
	}
	all, err := stores[1].Claims(ctx, "conv-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != keys {
		t.Fatalf("Claims returned %d entries, want %d", len(all), keys)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Errorf("entries out of order: seq %d after %d", all[i].Seq, all[i-1].Seq)
		}
	}
	tail, err := stores[2].Claims(ctx, "conv-1", all[keys/2].Seq)
	if err != nil || len(tail) != keys-keys/2-1 {
		t.Errorf("Claims after the middle entry: %d entries (%v), want %d", len(tail), err, keys-keys/2-1)
	}
	if other, err := stores[0].Claims(ctx, "conv-2", 0); err != nil || len(other) != 0 {
		t.Errorf("another conversation's claims: %d (%v), want none", len(other), err)
	}
}

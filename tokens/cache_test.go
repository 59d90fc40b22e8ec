package tokens

import (
	"strings"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	base := CounterFunc(func(s string) int {
		mu.Lock()
		calls++
		mu.Unlock()
		return len(s)
	})
	k := NewCache(base, &CacheOptions{MinLen: 4, MaxEntries: 2})
	for range 3 {
		if k.Count("abcdef") != 6 {
			t.Fatal("wrong count")
		}
	}
	if calls != 1 {
		t.Fatalf("counted %d times", calls)
	}
	k.Count("ab") // short: never cached
	k.Count("ab")
	if calls != 3 {
		t.Fatalf("short text cached (%d calls)", calls)
	}
	// Fill past MaxEntries: the oldest generation is dropped, a recent
	// entry survives by promotion.
	k.Count("1111")
	k.Count("2222") // rotates: old={abcdef,1111}
	k.Count("abcdef")
	k.Count("3333")
	k.Count("4444")
	before := calls
	k.Count("abcdef")
	if calls != before {
		t.Fatal("promoted entry lost")
	}
	if h, m := k.Stats(); h < 4 || m < 5 {
		t.Fatalf("stats %d/%d", h, m)
	}
}

func TestCacheExactUnderConcurrency(t *testing.T) {
	c := mustO200k(t)
	k := NewCache(c, nil)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	want := c.Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := k.Count(text); got != want {
					t.Errorf("cached %d, want %d", got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCacheHit measures a repeat count of the benchmark text through
// a Cache, the common case when a view is recounted every round.
func BenchmarkCacheHit(b *testing.B) {
	k := NewCache(mustO200k(b), nil)
	text := benchText(b)
	k.Count(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		k.Count(text)
	}
}

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
	if h, m := k.stats(); h < 4 || m < 5 {
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

// TestCacheIdentityAndContent checks the two ways a text is found: the same
// string (same memory) by identity, an equal string in other memory by
// content, both exactly; and that content hits add no identity entries, so
// transient copies do not evict the texts a view shares with the
// transcript.
func TestCacheIdentityAndContent(t *testing.T) {
	calls := 0
	base := CounterFunc(func(s string) int { calls++; return len(strings.Fields(s)) })
	k := NewCache(base, &CacheOptions{MaxEntries: 8})
	shared := strings.Repeat("one two ", 50)
	if got := k.Count(shared); got != 100 || calls != 1 {
		t.Fatalf("first count %d (%d calls)", got, calls)
	}
	for i := range 20 {
		copyOf := string([]byte(shared)) // equal content, other memory
		if got := k.Count(copyOf); got != 100 {
			t.Fatalf("copy %d counted %d", i, got)
		}
		if got := k.Count(shared); got != 100 {
			t.Fatalf("shared counted %d", got)
		}
	}
	if calls != 1 {
		t.Errorf("counted %d times, want once", calls)
	}
	if n := len(k.cur.byID); n != 1 {
		t.Errorf("%d identity entries after 20 content hits, want 1", n)
	}
	if k.Count("") != 0 || calls != 2 {
		t.Errorf("the empty text is counted by the counter, uncached (%d calls)", calls)
	}
}

// TestCacheEvictionStaysExact fills the cache past both generations and
// checks every count is still the counter's.
func TestCacheEvictionStaysExact(t *testing.T) {
	c := mustO200k(t)
	k := NewCache(c, &CacheOptions{MaxEntries: 16})
	var texts []string
	for i := range 100 {
		texts = append(texts, strings.Repeat("token ", i+1)+"end")
	}
	for round := range 3 {
		for _, s := range texts {
			if got, want := k.Count(s), c.Count(s); got != want {
				t.Fatalf("round %d: cached %d, want %d", round, got, want)
			}
		}
	}
}

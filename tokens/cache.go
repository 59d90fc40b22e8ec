package tokens

import "sync"

// CacheOptions configure [NewCache]. The zero value means defaults.
type CacheOptions struct {
	// MinLen is the shortest text (in bytes) worth remembering; shorter
	// texts are counted each time, which is cheaper than keeping them.
	// 0 means 256.
	MinLen int
	// MaxEntries bounds each of the cache's two generations; 0 means 4096.
	MaxEntries int
}

// Cache is a Counter that remembers the counts of long texts. A view is
// rebuilt from the transcript every round and almost all of it is the same
// as last round, while BPE counting runs at a few MB/s (see
// BenchmarkO200kCount), so policies that count whole requests every round
// should share one Cache. Memory stays bounded: entries live in two
// generations, and when the newer one fills up the older one is dropped.
// Keys are the texts themselves (Go shares string memory, so a cached text
// that the transcript also holds costs no copy), and a hit is exact: the
// cache never changes a count. It is safe for concurrent use.
type Cache struct {
	c      Counter
	minLen int
	max    int

	mu         sync.Mutex
	cur, old   map[string]int
	hits, miss int
}

// NewCache wraps c; nil options mean defaults.
func NewCache(c Counter, opts *CacheOptions) *Cache {
	k := &Cache{c: c, minLen: 256, max: 4096}
	if opts != nil {
		if opts.MinLen > 0 {
			k.minLen = opts.MinLen
		}
		if opts.MaxEntries > 0 {
			k.max = opts.MaxEntries
		}
	}
	k.cur = make(map[string]int)
	return k
}

// Count returns the count of text, from the cache when it has it.
func (k *Cache) Count(text string) int {
	if len(text) < k.minLen {
		return k.c.Count(text)
	}
	k.mu.Lock()
	if n, ok := k.cur[text]; ok {
		k.hits++
		k.mu.Unlock()
		return n
	}
	if n, ok := k.old[text]; ok {
		k.hits++
		k.put(text, n)
		k.mu.Unlock()
		return n
	}
	k.miss++
	k.mu.Unlock()

	n := k.c.Count(text) // outside the lock: counting is the slow part

	k.mu.Lock()
	k.put(text, n)
	k.mu.Unlock()
	return n
}

// put must be called with mu held.
func (k *Cache) put(text string, n int) {
	if len(k.cur) >= k.max {
		k.old, k.cur = k.cur, make(map[string]int, k.max)
	}
	k.cur[text] = n
}

// Stats returns how many lookups of cacheable texts hit and missed.
func (k *Cache) Stats() (hits, misses int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits, k.miss
}

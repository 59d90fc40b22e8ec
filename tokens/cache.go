package tokens

import (
	"sync"
	"unsafe"
)

// CacheOptions configure [NewCache]. The zero value means defaults.
type CacheOptions struct {
	// MinLen is the shortest text (in bytes) worth remembering; shorter
	// texts are counted each time. 0 means 1: every non-empty text is
	// remembered, since even a short text costs the BPE splitter
	// microseconds while a hit costs a map lookup.
	MinLen int
	// MaxEntries bounds each of the cache's two generations; 0 means
	// 16384. A generation should hold the texts of one whole request (every
	// message, call id and argument list), or each request recounts what
	// the last one evicted.
	MaxEntries int
}

// Cache is a Counter that remembers the counts of texts. A view is rebuilt
// from the transcript every round and almost all of it is the same as last
// round, while BPE counting runs at a few MB/s (see BenchmarkO200kCount),
// so policies that count whole requests every round should share one
// Cache. A hit is exact: the cache never changes a count.
//
// Texts are looked up first by identity — where their bytes are and how
// many — and then by content. A view rebuilt from the transcript shares
// the transcript's string memory, so a text counted in one request is
// found again in the next without hashing its bytes: the cost of a hit does
// not grow with the text, and a request's recount does not grow with the
// history's size. An identity entry keeps its text's memory alive, so the
// same address and length always hold the same bytes (strings are
// immutable). A text with the same content in other memory (a placeholder
// rendered again) is found by content and then remembered by identity too.
//
// Memory stays bounded: entries live in two generations, and when the
// newer one fills up the older one is dropped. Keys are the texts
// themselves (no copy is made). It is safe for concurrent use.
type Cache struct {
	c      Counter
	minLen int
	max    int

	mu         sync.Mutex
	cur, old   cacheGen
	hits, miss int
}

// cacheGen is one generation: the same counts by identity and by content.
type cacheGen struct {
	byID      map[textID]int
	byContent map[string]int
}

func newCacheGen(size int) cacheGen {
	return cacheGen{byID: make(map[textID]int, size), byContent: make(map[string]int, size)}
}

// textID is where a string's bytes are and how many. The pointer keeps
// the bytes alive while the entry exists, so the pair names one content.
type textID struct {
	p *byte
	n int
}

func idOf(s string) textID { return textID{unsafe.StringData(s), len(s)} }

// NewCache wraps c; nil options mean defaults.
func NewCache(c Counter, opts *CacheOptions) *Cache {
	k := &Cache{c: c, minLen: 1, max: 16384}
	if opts != nil {
		if opts.MinLen > 0 {
			k.minLen = opts.MinLen
		}
		if opts.MaxEntries > 0 {
			k.max = opts.MaxEntries
		}
	}
	k.cur = newCacheGen(0)
	return k
}

// Count returns the count of text, from the cache when it has it.
func (k *Cache) Count(text string) int {
	if len(text) < k.minLen || len(text) == 0 {
		return k.c.Count(text)
	}
	id := idOf(text)
	k.mu.Lock()
	if n, ok := k.cur.byID[id]; ok {
		k.hits++
		k.mu.Unlock()
		return n
	}
	if n, ok := k.lookup(text, id); ok {
		k.hits++
		k.mu.Unlock()
		return n
	}
	k.miss++
	k.mu.Unlock()

	n := k.c.Count(text) // outside the lock: counting is the slow part

	k.mu.Lock()
	k.put(text, id, n, true)
	k.mu.Unlock()
	return n
}

// lookup finds text in the newer generation by content, or in the older
// one, and promotes what it finds to the newer one. A content hit adds no
// identity entry: the text may be a transient copy (a conversion of JSON
// arguments made for this count), and remembering every such copy would
// fill the generation with addresses never seen again. mu must be held.
func (k *Cache) lookup(text string, id textID) (int, bool) {
	if n, ok := k.cur.byContent[text]; ok {
		return n, true
	}
	if k.old.byID == nil {
		return 0, false
	}
	if n, ok := k.old.byID[id]; ok {
		k.put(text, id, n, true)
		return n, true
	}
	if n, ok := k.old.byContent[text]; ok {
		k.put(text, id, n, false)
		return n, true
	}
	return 0, false
}

// put remembers n as the count of text, and of its identity when withID.
// mu must be held.
func (k *Cache) put(text string, id textID, n int, withID bool) {
	if len(k.cur.byContent) >= k.max || len(k.cur.byID) >= k.max {
		k.old, k.cur = k.cur, newCacheGen(0)
	}
	if withID {
		k.cur.byID[id] = n
	}
	k.cur.byContent[text] = n
}

// stats returns how many lookups of cacheable texts hit and missed.
func (k *Cache) stats() (hits, misses int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits, k.miss
}

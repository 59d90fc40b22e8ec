package tokens

import (
	"fmt"
	"math"

	"github.com/tiktoken-go/tokenizer"
)

// ranks maps each token of a vocabulary (its bytes) to its rank: byte-pair
// encoding merges the adjacent pair whose union has the lowest rank first.
type ranks map[string]uint32

// noRank marks a pair that is no token.
const noRank = math.MaxUint32

// vocabularyOf reads a codec's vocabulary back by decoding each id: the
// codec keeps its map unexported. A codec without error mode decodes a
// token to its raw bytes (a token may hold part of a UTF-8 sequence).
func vocabularyOf(enc tokenizer.Encoding) (ranks, error) {
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokens: encoding %q: %w", enc, err)
	}
	r := make(ranks, 200_000)
	misses := 0
	for id := uint(0); misses < 1024; id++ {
		tok, err := c.Decode([]uint{id})
		if err != nil || tok == "" {
			misses++ // ids past the end, and holes such as special tokens
			continue
		}
		misses = 0
		r[tok] = uint32(id)
	}
	if len(r) < 256 {
		return nil, fmt.Errorf("tokens: encoding %q: %d tokens read back", enc, len(r))
	}
	return r, nil
}

// count returns the number of tokens byte-pair encoding splits piece into.
func (r ranks) count(piece string) int {
	if _, ok := r[piece]; ok || len(piece) <= 1 {
		return min(len(piece), 1)
	}
	if len(piece) <= shortPiece {
		return r.countShort(piece)
	}
	return r.countLong(piece)
}

// shortPiece is the length up to which count merges by scanning, on the
// stack; longer pieces merge through a heap, in O(n log n).
const shortPiece = 64

// countShort merges the lowest-ranked adjacent pair, the leftmost among
// equals, until no pair is a token, as tiktoken's byte_pair_merge does.
func (r ranks) countShort(piece string) int {
	var start [shortPiece + 1]int32
	var rank [shortPiece + 1]uint32
	n := len(piece)
	for i := 0; i <= n; i++ {
		start[i] = int32(i)
	}
	pair := func(i, parts int) uint32 { // rank of parts i and i+1 merged
		if i+2 > parts {
			return noRank
		}
		if v, ok := r[piece[start[i]:start[i+2]]]; ok {
			return v
		}
		return noRank
	}
	parts := n // parts are [start[i], start[i+1]) for i < parts
	for i := 0; i < parts; i++ {
		rank[i] = pair(i, parts)
	}
	for parts > 1 {
		best, at := uint32(noRank), -1
		for i := 0; i < parts-1; i++ {
			if rank[i] < best {
				best, at = rank[i], i
			}
		}
		if at < 0 {
			break
		}
		copy(start[at+1:parts], start[at+2:parts+1])
		copy(rank[at+1:parts-1], rank[at+2:parts])
		parts--
		rank[at] = pair(at, parts)
		if at > 0 {
			rank[at-1] = pair(at-1, parts)
		}
	}
	return parts
}

// mergeNode is a part of countLong's linked list: its start is its index,
// next the start of the part after it (len(piece) after the last), rank
// that of it merged with the next part.
type mergeNode struct {
	prev, next int32
	rank       uint32
}

// countLong is countShort in O(n log n): parts in a linked list, pairs in
// a min-heap by (rank, start), entries whose rank changed skipped.
func (r ranks) countLong(piece string) int {
	n := int32(len(piece))
	nodes := make([]mergeNode, n+1)
	for i := range nodes {
		nodes[i] = mergeNode{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	rankAt := func(i int32) uint32 {
		j := nodes[i].next
		if j >= n {
			return noRank
		}
		if v, ok := r[piece[i:nodes[j].next]]; ok {
			return v
		}
		return noRank
	}
	h := make(pairHeap, 0, n)
	for i := int32(0); i < n; i++ {
		if nodes[i].rank = rankAt(i); nodes[i].rank != noRank {
			h = append(h, pairAt{nodes[i].rank, i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.start
		if nodes[i].rank != top.rank {
			continue // stale: the pair merged or changed since
		}
		j := nodes[i].next
		nodes[i].next = nodes[j].next
		nodes[nodes[j].next].prev = i
		nodes[j].rank = noRank
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			if nodes[b].rank = rankAt(b); nodes[b].rank != noRank {
				h.push(pairAt{nodes[b].rank, b})
			}
		}
	}
	return parts
}

// pairAt is a mergeable pair: its rank and the start of its first part.
type pairAt struct {
	rank  uint32
	start int32
}

// pairHeap is a min-heap of pairs by rank, then start, so that the
// leftmost of equal ranks merges first.
type pairHeap []pairAt

func (h pairHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].start < h[b].start
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pairAt) {
	*h = append(*h, p)
	for i := len(*h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

func (h *pairHeap) pop() pairAt {
	old := *h
	top := old[0]
	old[0] = old[len(old)-1]
	*h = old[:len(old)-1]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}

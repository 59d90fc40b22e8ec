package policy

import (
	"fmt"
	"slices"
	"sync"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/tokens"
)

// CachePrice is one provider's price of request input, in units of an
// uncached input token of its own: what the tokens outside the cached
// prefix cost (Uncached: 1, or 1.25 where they are written to a 5-minute
// cache) and what the tokens read from the cache cost (Cached). Output is
// left out: a view policy does not change what the model writes.
type CachePrice struct {
	Name             string
	Uncached, Cached float64
}

// defaultCompactPrices are the price models a clear for cost must not lose
// under ([CompactPolicy.Prices]): every one of catalog.PriceModels, output
// left out.
func defaultCompactPrices() []CachePrice {
	var out []CachePrice
	for _, m := range catalog.PriceModels() {
		out = append(out, CachePrice{Name: m.Name, Uncached: m.CacheWrite, Cached: m.CachedRead})
	}
	return out
}

// maxBooks bounds the conversations whose savings a policy remembers; the
// least recently used is forgotten first, and starts again from nothing.
const maxBooks = 1024

// bank is what a CompactPolicy has saved in one conversation against
// keeping everything (see "The savings bank" on CompactPolicy).
//
// Every request the policy builds is priced twice, each against its own
// model of the provider's prompt cache (tokens.PromptCache): the request
// as built, and the same request with every tool result whole and no note
// (what keeping everything sends). Their difference under each price is
// the request's saving. A request is booked when the next one is built,
// so a request built again (a retry after an overflow) replaces its
// pending figures instead of adding to them. A request the agent answered
// with re-reads alone is booked at its whole price instead, and keeping
// everything's requests leave re-reads out (see compact_reread.go).
type bank struct {
	prices []CachePrice
	// index is the request of pending (requestsSoFar), 0 before any.
	index int
	// late is set while the bank has booked nothing of a conversation it
	// first saw after its first request (a restarted process): the
	// provider's cache is warm but the models are empty, so the first
	// request only primes them, saves nothing and covers no clear.
	late bool
	// saved is the bank under each price, through request index-1; built
	// and kept are the cache models after request index-1 of the request as
	// built and as keeping everything sends it.
	saved       []float64
	built, kept tokens.PromptCache
	pending     struct {
		built, kept tokens.PromptCache
		// saving is the request's saving; cost what it cost as built.
		saving, cost []float64
	}
	// whole is each result's tool message as keeping everything shows it,
	// by call id (built once, so the cache model compares by pointer).
	whole map[string]harness.Message
	// wholeAt is the whole message of each message index of the last
	// requests, found again by a pointer compare (see resultItems.at).
	wholeAt []wholeMsg
	// keptBuf holds the messages of the requests keepAll made (see there).
	keptBuf []harness.Message
	// rereads remembers by call id whether a call is a re-read; nil when
	// the bank charges none (CompactPolicy.ChargeRereads off).
	rereads map[string]bool
}

// wholeMsg is a result's tool message as keeping everything shows it.
type wholeMsg struct {
	res *harness.ToolResult
	msg harness.Message
}

// books holds the banks of the conversations a policy serves.
type books struct {
	mu    sync.Mutex
	byKey map[string]*bank
	order []string // least recently used first
}

// convKey names a conversation: its id, or its address when it has none.
func convKey(conv *harness.Conversation) string {
	if conv.ID != "" {
		return "id:" + conv.ID
	}
	return fmt.Sprintf("ptr:%p", conv)
}

// open returns conv's bank as of request index: the request before it is
// booked when index moved on, and the bank starts again from nothing when
// index went back (a conversation restarted under the same id). A bank
// that charges re-reads (charge) books a request reread says the agent
// answered with re-reads alone at its whole price, as keeping everything
// never sent it.
func (b *books) open(conv *harness.Conversation, index int, counter tokens.Counter, prices []CachePrice, charge, reread bool) *bank {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := convKey(conv)
	k, ok := b.byKey[key]
	if i := slices.Index(b.order, key); i >= 0 {
		b.order = slices.Delete(b.order, i, i+1)
	}
	b.order = append(b.order, key)
	if !ok || index < k.index {
		k = &bank{prices: prices, saved: make([]float64, len(prices)), late: index > 1,
			built: *tokens.NewPromptCache(counter), kept: *tokens.NewPromptCache(counter), whole: map[string]harness.Message{}}
		if charge {
			k.rereads = map[string]bool{}
		}
		if b.byKey == nil {
			b.byKey = map[string]*bank{}
		}
		b.byKey[key] = k
		for len(b.order) > maxBooks {
			delete(b.byKey, b.order[0])
			b.order = b.order[1:]
		}
	}
	reread = reread && k.rereads != nil
	if k.index > 0 && index > k.index {
		k.built = k.pending.built
		if !reread {
			k.kept = k.pending.kept
		}
		if !k.late {
			for i, s := range k.pending.saving {
				if reread {
					s = -k.pending.cost[i]
				}
				k.saved[i] += s
			}
		}
		k.late = false
	}
	k.index = index
	return k
}

// price is what a request that counted cnt costs under p.
func price(p CachePrice, cnt tokens.Count) float64 {
	return p.Uncached*float64(cnt.Input-cnt.Cached) + p.Cached*float64(cnt.Cached)
}

// saving prices v's request as built and as keeping everything sends it,
// against the cache models after the previous request, and returns what
// v saves under each price, what it costs as built, and the two models
// after it.
func (k *bank) saving(v *harness.View) (saving, cost []float64, _, _ tokens.PromptCache) {
	built, kept := k.built, k.kept
	b := built.Add(v.Request(0))
	n := kept.Add(k.keepAll(v))
	saving, cost = make([]float64, len(k.prices)), make([]float64, len(k.prices))
	for i, p := range k.prices {
		cost[i] = price(p, b)
		saving[i] = price(p, n) - cost[i]
	}
	return saving, cost, built, kept
}

// book records v's request as the pending one: it is added to the bank
// when the next request is built.
func (k *bank) book(v *harness.View) {
	k.pending.saving, k.pending.cost, k.pending.built, k.pending.kept = k.saving(v)
}

// covers reports whether the bank, with the request of v (the view as it
// would be sent after a clear) booked, is still at least zero under every
// price: the run has so far cost no more than keeping everything, whatever
// the clear costs now.
func (k *bank) covers(v *harness.View) bool {
	if k.late {
		return false
	}
	s, _, _, _ := k.saving(v)
	for i := range k.prices {
		if k.saved[i]+s[i] < -1e-9 {
			return false
		}
	}
	return true
}

// keepAll is v's request as keeping everything would send it: every tool
// result whole, no note message (the view's messages of Turn 0 after the
// system prompt) and, when the bank charges re-reads, no re-read
// (rereadCall) nor its result. A summary's covered turns are not put back: the
// bank then counts them as saved, which a conversation with a summarizer
// has indeed saved.
//
// Keeping everything only ever appends, so the requests share one buffer:
// a request whose messages start with the buffer's writes only its new
// ones past the end of every earlier request, and one that differs gets a
// buffer of its own.
func (k *bank) keepAll(v *harness.View) *harness.Request {
	req := v.Request(0)
	buf, n, own := k.keptBuf, 0, false
	put := func(m *harness.Message) {
		if !own && n < len(buf) {
			if promptunit.SameMessage(m, &buf[n]) {
				n++ // serialized alike: counted alike
				return
			}
			buf, own = append(make([]harness.Message, 0, len(v.Messages)), buf[:n]...), true
		}
		buf = append(buf[:n], *m)
		n++
	}
	for i := range v.Messages {
		m, o := &v.Messages[i], &v.Origins[i]
		switch {
		case m.Role == harness.RoleTool && k.rereads[m.ToolCallID]:
			// a re-read's result: keeping everything reads nothing back
		case o.Result != nil && m.Role == harness.RoleTool:
			w := k.wholeOf(i, o.Result)
			put(&w)
		case o.Turn == 0 && m.Role == harness.RoleUser:
			// the note message: keeping everything shows none
		case m.Role == harness.RoleAssistant && len(m.ToolCalls) > 0 && k.rereads != nil:
			if w, ok := k.withoutRereads(m); ok {
				put(w)
			}
		default:
			put(m)
		}
	}
	if own || len(buf) > len(k.keptBuf) {
		k.keptBuf = buf
	}
	req.Messages = buf[:n:n]
	return req
}

// wholeOf is res's tool message, shown by message i, as keeping
// everything shows it (built once per result).
func (k *bank) wholeOf(i int, res *harness.ToolResult) harness.Message {
	if i < len(k.wholeAt) && k.wholeAt[i].res == res {
		return k.wholeAt[i].msg
	}
	w, ok := k.whole[res.CallID]
	if !ok {
		w = harness.ToolMessage(res)
		w.Parts = res.FullParts()
		k.whole[res.CallID] = w
	}
	if i >= len(k.wholeAt) {
		k.wholeAt = append(k.wholeAt, make([]wholeMsg, i+1-len(k.wholeAt))...)
	}
	k.wholeAt[i] = wholeMsg{res, w}
	return w
}

// afterClear returns a copy of c's view with the clear through next
// committed, leaving c's view and conversation as they are: what the
// request would be if the policy cleared.
func (c *compaction) afterClear(next compactPos) *harness.View {
	hv := *c.v
	hv.Messages, hv.Origins = slices.Clone(c.v.Messages), slices.Clone(c.v.Origins)
	conv := *c.v.Conversation
	conv.Notes = slices.Clone(conv.Notes)
	hv.Conversation = &conv
	h := *c
	h.v, h.raw = &hv, slices.Clone(c.raw)
	_ = h.commitMark(c.ctx, next) // commitMark cannot fail
	return &hv
}

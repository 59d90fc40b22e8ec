package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// Responses chains. A Responses request may continue a stored response by
// its id (previous_response_id): its input holds only what is new since
// that answer (the outputs of its calls, the next prompt), and the
// upstream puts the rest in front. Read alone, such a request has no
// prompt to key its conversation by and results whose calls it does not
// carry, so its results would be decided without their tool and recorded
// in no round. The proxy keeps, for each conversation, the items of its
// last Responses request with that request's answer (conversation.chain),
// and for each answer id the conversation it answered (Proxy.chains,
// bounded by maxChains): a request continuing a known answer belongs to
// that conversation and is read as those items followed by its own. Its
// earlier results are not in its body: they keep the decisions made when
// they came (counted in the turn's evidence, never edited), and the idle
// clear does not act on such a request, since the upstream holds those
// results as they were sent. A request continuing an answer the proxy did
// not relay (another process's, or one forgotten) is a conversation keyed
// by that answer's id, which its own answer then continues. A request
// that adds to a conversation the upstream stores (its "conversation", an
// id) is the same: its conversation is keyed by that id and goes on from
// its last answer.
//
// A replica (Options.Shared) does not read chains: each replica knows only
// the answers it relayed, and its conversation state follows the claim
// log, which records what requests carry; each request continuing an
// answer is there a conversation keyed by that answer's id, and one adding
// to an upstream conversation is keyed as a whole history is.

// maxChains bounds the answer ids the proxy remembers; the oldest go
// first.
const maxChains = 4096

// chain is what a conversation keeps for a request that continues its
// last answer.
type chain struct {
	// answer is the id of the conversation's last Responses answer; items
	// and reply the history it ended: its request's items, then the
	// answer as an assistant item.
	answer string
	items  []item
	reply  item
}

// chains maps answer ids to the conversations they answered, oldest first
// in order for eviction.
type chains struct {
	conv  map[string]string
	order []string
}

// continues reports whether req is read as continuing an answer: it
// names one, or (on a proxy that is no replica) an upstream conversation.
func (p *Proxy) continues(req *request) bool {
	return req.PrevResponse != "" || req.Stored != "" && p.replicas.log == nil
}

// chainConversation returns the conversation a request continuing
// answer prev (or adding to the upstream conversation stored) belongs to:
// the one that answered prev when the proxy relayed it, and keyed, the one
// keyed by prev (by stored), which the request moves to when the first no
// longer holds that answer's history (see continueChain).
func (p *Proxy) chainConversation(r *http.Request, prev, stored string) (linked, keyed string) {
	name := "previous_response_id\x00" + prev
	if prev == "" {
		name = "conversation\x00" + stored
	}
	sum := sha256.Sum256([]byte("openai-responses\x00" + name))
	keyed = p.tenantConversation(r, "px-"+hex.EncodeToString(sum[:])[:20])
	if p.replicas.log == nil && prev != "" {
		p.mu.Lock()
		id, ok := p.chains.conv[prev]
		p.mu.Unlock()
		if ok {
			return id, keyed
		}
	}
	return keyed, keyed
}

// continueChain reads the history of c, a request continuing an answer,
// in its conversation (locked and loaded): that answer's history and the
// request's items when the conversation holds it, else the request's
// items alone in the conversation keyed by the answer, which c moves to
// (locked, loaded and held, the first unlocked and released).
func (p *Proxy) continueChain(ctx context.Context, c *call) {
	cv := c.conv
	prev := c.req.PrevResponse
	if prev == "" {
		prev = cv.chain.answer // an upstream conversation goes on from its last answer
	}
	c.items, c.continued = cv.continued(prev, c.req.Items)
	if !c.continued && cv.id != c.keyed {
		cv.mu.Unlock()
		to := p.conversation(c.keyed)
		to.mu.Lock()
		c.conv = to
		p.release(cv)
		if p.replicas.log == nil {
			if err := to.load(ctx, p.opts.Store, p.rec); err != nil {
				p.logf("harness proxy: loading %s from the store: %v", to.id, err)
			}
		}
	}
	c.hist = buildHistory(c.items)
	if c.continued {
		c.conv.earlierDecisions(c.hist)
	}
}

// linkAnswer remembers that answer id ended conversation cv's history
// items, for a request that continues it. Called with cv locked.
func (p *Proxy) linkAnswer(cv *conversation, id string, items []item, rep *reply) {
	if id == "" || p.replicas.log != nil {
		return
	}
	// The request's items are kept as they are (a parse never changes):
	// copying a long history on every answer would cost each request of
	// every Responses client, for the few that continue one.
	cv.chain = chain{answer: id, items: items, reply: item{Kind: itemAssistant, Text: rep.Text, Calls: rep.Calls}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.chains.conv == nil {
		p.chains.conv = map[string]string{}
	}
	if _, ok := p.chains.conv[id]; !ok {
		p.chains.order = append(p.chains.order, id)
	}
	p.chains.conv[id] = cv.id
	for len(p.chains.order) > maxChains {
		delete(p.chains.conv, p.chains.order[0])
		p.chains.order = p.chains.order[1:]
	}
}

// continued returns the items a request continuing answer prev is read as
// in cv: cv's history up to that answer, its results with no span in this
// body, followed by the request's own; ok is false when prev is not cv's
// last answer (a branch from an older one, or a conversation reloaded
// from the store), and the request is read alone.
func (cv *conversation) continued(prev string, own []item) (items []item, ok bool) {
	if prev == "" || cv.chain.answer != prev {
		return own, false
	}
	items = make([]item, 0, len(cv.chain.items)+1+len(own))
	for _, it := range cv.chain.items {
		if it.Kind == itemResult {
			r := *it.Result
			r.Content, r.Decode, r.sum = span{}, noText, 0
			it.Result = &r
		}
		items = append(items, it)
	}
	items = append(items, cv.chain.reply)
	return append(items, own...), true
}

// earlierDecisions gives the results of h that c's body does not carry
// (a continued request's earlier ones) the decisions cv made for them.
func (cv *conversation) earlierDecisions(h *history) {
	for _, r := range h.Results {
		if r.Content.End > r.Content.Start {
			continue
		}
		if ds := cv.decided[r.CallID]; len(ds) > 0 {
			r.dec = ds[len(ds)-1]
		}
	}
}

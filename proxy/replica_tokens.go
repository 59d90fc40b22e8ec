package proxy

import (
	"bytes"
	"sync/atomic"
)

// A cut result's token count. The savings of every request that sends a
// cut count what it removed: the result's tokens as the client sent it
// less its model copy's. A large result is the tokenizer's longest job on
// a request, so the replica that cuts a result counts it once,
// in the background while the request is upstream, and claims the count
// with the request's answer (claimAnswered): the replicas that serve the
// conversation's later requests read it from the log with the answer and
// count nothing. A count not claimed (the upstream failed, the log did
// not answer) is counted again by the savings of a replica that needs it.

// tokenCount is a result's token count being made off the request's path.
type tokenCount struct {
	d    *decision
	done chan struct{}
}

// countTokens counts, in the background, the tokens of lit (a result's
// content as the client sent it, copied since the request's buffer is
// reused once free) into d.tokens, unless a claim of another replica
// brought the count first.
func (p *Proxy) countTokens(cv *conversation, d *decision, lit []byte) *tokenCount {
	tc := &tokenCount{d: d, done: make(chan struct{})}
	lit = bytes.Clone(lit)
	finished := p.track()
	go func() {
		defer finished()
		defer close(tc.done)
		n := countLiteral(p.savings.count, lit)
		cv.mu.Lock()
		atomic.CompareAndSwapInt64(&d.tokens, 0, n)
		cv.mu.Unlock()
	}()
	return tc
}

// awaitCounts waits for the counts of the results c cut: bounded work,
// done long before a model answers.
func (c *call) awaitCounts() {
	for _, tc := range c.counts {
		<-tc.done
	}
}

// tokenClaims returns the claims of c's counted results.
func tokenClaims(c *call) (keys []string, vals []claimValue) {
	c.awaitCounts()
	c.conv.mu.Lock()
	defer c.conv.mu.Unlock()
	for _, tc := range c.counts {
		if n := atomic.LoadInt64(&tc.d.tokens); n > 0 && tc.d.res != nil {
			keys, vals = append(keys, resultKey(claimTokens, tc.d)), append(vals, claimValue{Tokens: n})
		}
	}
	return keys, vals
}

package proxy

import (
	"context"
	"maps"
	"time"

	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/store"
)

// Store outages. A store that does not answer (PostgreSQL down or
// restarting) costs no request: while it fails, one call to the claim
// log goes through every probeEvery and the others are skipped, each
// conversation going on with the decisions this replica knows; the first
// call that succeeds ends the outage for every conversation. The recorder
// keeps each conversation's queue, trying its head again with backoff
// until the store answers, for up to outageBudget, instead of dropping
// the writes. One line is logged when the outage begins and one when it
// ends.
//
// What a replica cannot claim it sends as the client sent it: a result
// it decided but could not claim (no other replica can know that
// decision), and a result of an earlier round the log lacks (it went
// upstream while the log did not answer, so, by this rule, unchanged).
// Every replica thus sends such results alike, during the outage and
// after. A result another replica claimed that this one could not read
// is sent unchanged too, a cache break no replica can avoid; the replica
// marks it in the log once the log answers (claimUnchanged), with the
// start of the model call it could not claim, and every replica sends it
// unchanged from then on instead of breaking the cache a second time. The
// replica serving the next request of the conversation waits for those
// marks (a history whose last round has no start in the log, up to
// unstartedWait).

// probeEvery is how often a call to the claim log goes through while the
// store fails.
const probeEvery = 100 * time.Millisecond

// unstartedWait bounds how long a request waits for the start of its
// history's last round, which a replica claims once the log answers
// again; replicaPending bounds how long that replica keeps trying.
const (
	unstartedWait  = time.Second
	replicaPending = 30 * time.Second
)

// outageBudget bounds how long a write waits for the store to come back.
const outageBudget = 10 * time.Minute

// outageRetry is the backoff of a write waiting for the store.
var outageRetry = retry.Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second, MaxRetries: 1 << 30}

// replicaSkip reports whether a call to the claim log is skipped: the
// store fails, and another call went through less than probeEvery ago.
func (p *Proxy) replicaSkip() bool {
	r := p.replicas
	if !r.down.Load() {
		return false
	}
	last := r.failedAt.Load()
	now := time.Now().UnixNano()
	if now-last < int64(probeEvery) {
		return true
	}
	return !r.failedAt.CompareAndSwap(last, now)
}

// lastRound is the turn and round of the latest round with results in
// the history: the results new in a request are in it (those of the
// rounds before went upstream in earlier requests).
func lastRound(h *history) [2]int {
	var last [2]int
	for _, r := range h.Results {
		if k := [2]int{r.Turn, r.Round}; k[0] > last[0] || (k[0] == last[0] && k[1] > last[1]) {
			last = k
		}
	}
	return last
}

// nextRound is the round a request with history h produces (as
// recordHistory keys it).
func nextRound(h *history) roundKey {
	if len(h.Turns) == 0 {
		return roundKey{1, 1}
	}
	return roundKey{len(h.Turns), len(h.Turns[len(h.Turns)-1].Rounds) + 1}
}

// sendUnchanged makes d send the result as the client sent it (see
// above) and marks it so, until the mark is in the log; an idle clear's
// placeholder stays.
func (d *decision) sendUnchanged() {
	if d.unchanged || d.cleared != nil {
		return
	}
	d.unchanged = true
	if d.out == nil && d.res.Model == nil {
		return // sent so already
	}
	res := *d.res
	res.Model, res.Cuts = nil, nil
	res.Meta = maps.Clone(d.res.Meta)
	d.res, d.out = &res, nil
}

// unstarted reports whether the history's last round has no start in
// the conversation's log although the round before it has: it was
// answered by a replica that could not claim it, and will (see above).
func (cv *conversation) unstarted(h *history) bool {
	if cv.claimSeq == 0 {
		return false
	}
	var last roundKey
	for i := len(h.Turns) - 1; i >= 0; i-- {
		if n := len(h.Turns[i].Rounds); n > 0 {
			last = roundKey{i + 1, n}
			break
		}
	}
	if _, mine := cv.pendingStarts[last]; mine || last.turn == 0 {
		return false
	}
	m := cv.maxStarted
	return last == roundKey{m.turn, m.round + 1} || last == roundKey{m.turn + 1, 1}
}

// claimPending writes what the conversation could not claim while the
// log did not answer (the starts of its model calls, the results it sent
// unchanged), trying every probeEvery until the log answers, for up to
// replicaPending or until the proxy closes.
func (p *Proxy) claimPending(cv *conversation) {
	ctx, cancel := context.WithTimeout(context.Background(), replicaPending)
	defer cancel()
	for !p.rec.isClosing() {
		cv.mu.Lock()
		b := &claimBatch{}
		for _, ds := range cv.decided {
			for _, d := range ds {
				if d.res != nil && (d.unchanged || !d.claimed) {
					b.decision(d, p.replicas.id)
				}
			}
		}
		starts := maps.Clone(cv.pendingStarts)
		for k, at := range starts {
			b.add(roundClaimKey(claimStart, k), claimValue{At: at}, nil)
		}
		cv.mu.Unlock()
		if len(b.keys) == 0 {
			return
		}
		if won, ok := p.claim(ctx, cv.id, b.keys, b.vals); ok {
			cv.mu.Lock()
			for i, f := range b.apply {
				if f != nil {
					f(won[i])
				}
			}
			for k := range starts {
				delete(cv.pendingStarts, k)
			}
			cv.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(probeEvery):
		}
	}
}

// storeProbe returns a cheap read that fails while the store does not
// answer (nil when the store has no claim log to read). A read failing
// on a connection a restart broke is made again, up to brokenConns
// times: the store that answers it is no outage.
func storeProbe(st store.Store) func(context.Context) error {
	c, ok := st.(store.Claimer)
	if !ok {
		return nil
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, replicaTimeout)
		defer cancel()
		var err error
		for range brokenConns + 1 {
			if _, err = c.Claims(ctx, "\x00probe", 1<<62); err == nil || ctx.Err() != nil {
				break
			}
		}
		return err
	}
}

// applyOrWait performs one queued write; when it fails and the store
// does not answer, it waits for the store and tries again (see above),
// unless the recorder is closing. A write that fails while the store
// answers is tried again up to ownFailures times before its error counts
// as its own: a restart breaks the pool's connections, each failing one
// write (the writer skips what a failed write did store, see
// turnwriter.go).
func (r *recorder) applyOrWait(ctx context.Context, w *turnWriter, o op) error {
	err := w.apply(ctx, o)
	if err == nil || r.probe == nil {
		return err
	}
	bctx, cancel := context.WithTimeout(ctx, outageBudget)
	defer cancel()
	answered, down := 0, false
	for attempt := 1; ; attempt++ {
		if r.probe(bctx) == nil {
			err = w.apply(ctx, o)
			if err == nil || r.probe(ctx) == nil {
				if answered++; err == nil || answered > ownFailures {
					if down {
						r.back()
					}
					return err // the store answers: the error is the write's own
				}
				if !sleepCtx(bctx, outageRetry.Backoff(answered)) {
					return err
				}
				continue
			}
		}
		down = true
		r.outage(err)
		if r.isClosing() {
			return err
		}
		if !sleepCtx(bctx, outageRetry.Backoff(attempt)) {
			return err
		}
	}
}

// ownFailures is how many times a write failing while the store answers
// is tried again.
const ownFailures = 4

// sleepCtx waits d unless ctx ends first (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// isClosing reports whether Close has been called.
func (r *recorder) isClosing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

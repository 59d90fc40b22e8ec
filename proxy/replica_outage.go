package proxy

import (
	"context"
	"time"

	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/store"
)

// Store outages. A store that does not answer (PostgreSQL down or
// restarting) costs no request: while it fails, one call to the claim
// log goes through every probeEvery and the others are skipped, each
// conversation going on with the decisions this replica knows (see
// claimDecisions for those it cannot claim); the first call that
// succeeds ends the outage for every conversation. The recorder keeps
// each conversation's queue, trying its head again with backoff until the
// store answers, for up to outageBudget, instead of dropping the writes.
// One line is logged when the outage begins and one when it ends.

// probeEvery is how often a call to the claim log goes through while the
// store fails.
const probeEvery = 100 * time.Millisecond

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

// storeProbe returns a cheap read that fails while the store does not
// answer (nil when the store has no claim log to read).
func storeProbe(st store.Store) func(context.Context) error {
	c, ok := st.(store.Claimer)
	if !ok {
		return nil
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, replicaTimeout)
		defer cancel()
		_, err := c.Claims(ctx, "\x00probe", 1<<62)
		return err
	}
}

// applyOrWait performs one queued write; when it fails and the store
// does not answer, it waits for the store and tries again (see above),
// unless the recorder is closing.
func (r *recorder) applyOrWait(ctx context.Context, w *turnWriter, o op) error {
	err := w.apply(ctx, o)
	if err == nil || r.probe == nil || r.probe(ctx) == nil {
		return err // the store answers: the error is the write's own
	}
	bctx, cancel := context.WithTimeout(ctx, outageBudget)
	defer cancel()
	for attempt := 1; ; attempt++ {
		r.outage(err)
		if r.isClosing() {
			return err
		}
		select {
		case <-time.After(outageRetry.Backoff(attempt)):
		case <-bctx.Done():
			return err
		}
		if r.probe(bctx) != nil {
			continue
		}
		err = w.apply(ctx, o)
		if err == nil || r.probe(ctx) == nil {
			r.back()
			return err
		}
	}
}

// isClosing reports whether Close has been called.
func (r *recorder) isClosing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

package proxy

import (
	"context"
	"time"

	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/store"
)

// Store outages. A store that does not answer (PostgreSQL down or
// restarting) costs no request: the claim log is left alone for
// probeEvery after a failure (the request goes on with the decisions this
// replica knows), and the recorder keeps each conversation's queue,
// trying its head again with backoff until the store answers, for up to
// outageBudget, instead of dropping the writes. One line is logged when
// the outage begins and one when it ends.

// probeEvery is how long after a failure the claim log is left alone.
const probeEvery = time.Second

// outageBudget bounds how long a write waits for the store to come back.
const outageBudget = 10 * time.Minute

// outageRetry is the backoff of a write waiting for the store.
var outageRetry = retry.Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second, MaxRetries: 1 << 30}

// replicaSkip reports whether the store failed less than probeEvery ago.
func (p *Proxy) replicaSkip() bool {
	r := p.replicas
	return r.down.Load() && time.Since(time.Unix(0, r.failedAt.Load())) < probeEvery
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

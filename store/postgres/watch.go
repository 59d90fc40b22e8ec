package postgres

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimsChannel is the NOTIFY channel of the claim log: Claim notifies it
// in its transaction with the conversation's id (hex), so a listener
// hears of an entry once it is visible.
const claimsChannel = "harness_claims"

// relisten is the pause before the watcher connects again after its
// connection broke.
const relisten = time.Second

// watcher holds the store's one listening connection, started on the
// first WatchClaims, and the channels waiting on each conversation.
type watcher struct {
	cfg *pgx.ConnConfig

	mu      sync.Mutex
	started bool
	closed  bool
	waiting map[string]map[*chan struct{}]bool // by conversation id (hex)
	cancel  context.CancelFunc
	done    chan struct{}
}

// WatchClaims implements store.ClaimWatcher.
func (s *pgStore) WatchClaims(conv string) (<-chan struct{}, func()) {
	w := &s.watch
	ch := make(chan struct{})
	key := hex.EncodeToString([]byte(conv))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch, func() {}
	}
	if !w.started {
		w.started = true
		w.waiting = map[string]map[*chan struct{}]bool{}
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done = cancel, make(chan struct{})
		go w.listen(ctx)
	}
	if w.waiting[key] == nil {
		w.waiting[key] = map[*chan struct{}]bool{}
	}
	w.waiting[key][&ch] = true
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if set := w.waiting[key]; set[&ch] {
			delete(set, &ch)
			if len(set) == 0 {
				delete(w.waiting, key)
			}
		}
	}
}

// listen keeps a connection listening on claimsChannel until ctx ends,
// waking the waiters of each conversation notified, and every waiter
// whenever it (re)connects or its connection breaks: what was committed
// meanwhile went unheard.
func (w *watcher) listen(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, w.cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+claimsChannel); err == nil {
				w.wake("")
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					w.wake(n.Payload)
				}
			}
			conn.Close(context.Background())
		}
		w.wake("")
		select {
		case <-ctx.Done():
		case <-time.After(relisten):
		}
	}
}

// wake closes the channels waiting on conversation key ("": on all).
func (w *watcher) wake(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, set := range w.waiting {
		if key != "" && k != key {
			continue
		}
		for ch := range set {
			close(*ch)
		}
		delete(w.waiting, k)
	}
}

// stop ends the listening connection and wakes every waiter; later
// watches are woken at once.
func (w *watcher) stop() {
	w.mu.Lock()
	w.closed = true
	started := w.started
	w.mu.Unlock()
	if started {
		w.cancel()
		<-w.done
	}
	w.wake("")
}

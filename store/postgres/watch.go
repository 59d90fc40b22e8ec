package postgres

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimsChannel is the NOTIFY channel of the claim log: Claim notifies it
// in its transaction with the conversation's id and the keys claimed
// (notice), so a listener hears of an entry once it is visible.
const claimsChannel = "harness_claims"

// maxNotice bounds a notice's payload (PostgreSQL's limit is 8000
// bytes); a longer one names the conversation alone, which wakes every
// watch of it.
const maxNotice = 7000

// notice is the payload Claim notifies: the conversation's id and each
// key, hex, separated by spaces.
func notice(conv string, keys [][]byte) string {
	var sb strings.Builder
	sb.WriteString(hex.EncodeToString([]byte(conv)))
	for _, k := range keys {
		if sb.Len()+1+2*len(k) > maxNotice {
			return hex.EncodeToString([]byte(conv))
		}
		sb.WriteByte(' ')
		sb.WriteString(hex.EncodeToString(k))
	}
	return sb.String()
}

// parseNotice reads a notice: the conversation (hex, as watches are
// keyed) and its keys, nil when it names none (every watch of it matches).
func parseNotice(payload string) (string, []string) {
	f := strings.Split(payload, " ")
	var keys []string
	for _, h := range f[1:] {
		k, err := hex.DecodeString(h)
		if err != nil {
			return f[0], nil
		}
		keys = append(keys, string(k))
	}
	return f[0], keys
}

// relisten is the pause before the watcher connects again after its
// connection broke.
const relisten = time.Second

// watcher holds the store's one listening connection, started on the
// first WatchClaims, and the channels waiting on each conversation.
type watcher struct {
	cfg *pgx.ConnConfig

	mu      sync.Mutex
	closed  bool
	waiting map[string]map[chan []string]string // by conversation id (hex): each watch's prefix
	// cancel and done stop and await the listener (nil until started).
	cancel context.CancelFunc
	done   chan struct{}
}

// WatchClaims implements store.ClaimWatcher.
func (s *pgStore) WatchClaims(conv, prefix string) (<-chan []string, func()) {
	w := &s.watch
	ch := make(chan []string, 1) // wake never blocks on its send
	key := hex.EncodeToString([]byte(conv))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch, func() {}
	}
	if w.done == nil {
		w.waiting = map[string]map[chan []string]string{}
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done = cancel, make(chan struct{})
		go w.listen(ctx)
	}
	if w.waiting[key] == nil {
		w.waiting[key] = map[chan []string]string{}
	}
	w.waiting[key][ch] = prefix
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		set := w.waiting[key]
		delete(set, ch)
		if len(set) == 0 {
			delete(w.waiting, key)
		}
	}
}

// listen keeps a connection listening on claimsChannel until ctx ends,
// waking every waiter whenever it (re)connects or its connection breaks:
// what was committed meanwhile went unheard.
func (w *watcher) listen(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		w.listenOnce(ctx)
		w.wakeAll()
		select {
		case <-ctx.Done():
		case <-time.After(relisten):
		}
	}
}

// listenOnce connects, listens and wakes the waiters of each notice until
// the connection breaks or ctx ends.
func (w *watcher) listenOnce(ctx context.Context) {
	conn, err := pgx.ConnectConfig(ctx, w.cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+claimsChannel); err != nil {
		return
	}
	w.wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		w.wake(parseNotice(n.Payload))
	}
}

// wake sends each channel waiting on conversation conv the keys of its
// prefix among keys, if any, and closes it (nil keys: closes every
// channel of conv, with no value).
func (w *watcher) wake(conv string, keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := w.waiting[conv]
	for ch, prefix := range set {
		if keys == nil {
			close(ch)
			delete(set, ch)
			continue
		}
		var heard []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				heard = append(heard, k)
			}
		}
		if heard != nil {
			ch <- heard
			close(ch)
			delete(set, ch)
		}
	}
	if len(set) == 0 {
		delete(w.waiting, conv)
	}
}

// wakeAll closes every waiting channel.
func (w *watcher) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.waiting {
		for ch := range set {
			close(ch)
		}
	}
	clear(w.waiting)
}

// stop ends the listening connection and wakes every waiter; later
// watches are woken at once.
func (w *watcher) stop() {
	w.mu.Lock()
	w.closed = true
	done := w.done
	w.mu.Unlock()
	if done != nil {
		w.cancel()
		<-done
	}
	w.wakeAll()
}

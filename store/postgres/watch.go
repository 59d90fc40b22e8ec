package postgres

import (
	"context"
	"encoding/hex"
	"slices"
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
// keyed) and its keys, nil when it names none (every watch matches).
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
	started bool
	closed  bool
	waiting map[string]map[*chan struct{}]string // by conversation id (hex): each watch's prefix
	cancel  context.CancelFunc
	done    chan struct{}
}

// WatchClaims implements store.ClaimWatcher.
func (s *pgStore) WatchClaims(conv, prefix string) (<-chan struct{}, func()) {
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
		w.waiting = map[string]map[*chan struct{}]string{}
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done = cancel, make(chan struct{})
		go w.listen(ctx)
	}
	if w.waiting[key] == nil {
		w.waiting[key] = map[*chan struct{}]string{}
	}
	w.waiting[key][&ch] = prefix
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		set := w.waiting[key]
		if _, ok := set[&ch]; ok {
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
				w.wake("", nil)
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					w.wake(parseNotice(n.Payload))
				}
			}
			conn.Close(context.Background())
		}
		w.wake("", nil)
		select {
		case <-ctx.Done():
		case <-time.After(relisten):
		}
	}
}

// wake closes the channels waiting on conversation conv ("": on every
// conversation) for a prefix of one of keys (nil: every channel).
func (w *watcher) wake(conv string, keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c, set := range w.waiting {
		if conv != "" && c != conv {
			continue
		}
		for ch, prefix := range set {
			if keys == nil || slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
				close(*ch)
				delete(set, ch)
			}
		}
		if len(set) == 0 {
			delete(w.waiting, c)
		}
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
	w.wake("", nil)
}

package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/agentharness/harness/store"
)

// readSignal is a countingStore that tells of each read of the claim log.
type readSignal struct {
	*countingStore
	read chan struct{}
}

func (s *readSignal) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	got, err := s.countingStore.Claims(ctx, conv, after)
	s.read <- struct{}{}
	return got, err
}

// TestAwaitMarkHearsTheMark: a recorder waiting for another replica's
// mark reads the claim log once when it starts waiting; the watch that
// hears the mark claimed ends the wait without reading the log again,
// while a mark of the same prefix (a longer number) does not end it.
func TestAwaitMarkHearsTheMark(t *testing.T) {
	read := make(chan struct{}, 16)
	r := newReplicaRigWith(t, 2, true, nil, func(i int, cs *countingStore) store.Store {
		if i == 0 {
			return &readSignal{countingStore: cs, read: read}
		}
		return cs
	})
	px, other := r.pxs[0], r.calls[1]
	// The listener wakes every watch once it listens: start it first.
	warm, stop := r.calls[0].WatchClaims("warm", "")
	<-warm
	stop()
	cv := px.conversation("conv-mark")
	defer px.release(cv)
	const mark = "s|replica|1"
	done := make(chan bool, 1)
	go func() { done <- px.awaitMark(context.Background(), cv, mark) }()
	<-read // the read as the wait begins: no mark yet
	claim := func(key string) {
		t.Helper()
		if _, err := other.Claim(context.Background(), "conv-mark", []store.Claim{{Key: key, Value: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	claim(mark + "0") // another mark of the prefix: the log is read again
	select {
	case <-read:
	case ok := <-done:
		t.Fatalf("the wait ended (%v) on another mark", ok)
	case <-time.After(time.Minute):
		t.Fatal("a mark of the prefix did not make the wait read the log")
	}
	claim(mark)
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("awaitMark reports the mark missing")
		}
	case <-time.After(time.Minute):
		t.Fatal("the mark did not end the wait")
	}
	select {
	case <-read:
		t.Error("the log was read again after the watch heard the mark")
	default:
	}
}

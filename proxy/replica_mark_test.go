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

// TestAwaitMarkRemembersMarksRead: the marks a wait reads in the log are
// remembered, so a later wait for one of them (another replica's writes
// queued after the first's) ends without reading the log.
func TestAwaitMarkRemembersMarksRead(t *testing.T) {
	r := newReplicaRig(t, 2, true)
	px, mine, other := r.pxs[0], r.calls[0], r.calls[1]
	cv := px.conversation("conv-marks")
	defer px.release(cv)
	for _, key := range []string{"s|replica|1", "s|replica|2"} {
		if _, err := other.Claim(context.Background(), "conv-marks", []store.Claim{{Key: key, Value: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	before := mine.snapshot().reads
	if !px.awaitMark(context.Background(), cv, "s|replica|1") {
		t.Fatal("the first mark is missing")
	}
	if !px.awaitMark(context.Background(), cv, "s|replica|2") {
		t.Fatal("the second mark is missing")
	}
	if reads := mine.snapshot().reads - before; reads != 1 {
		t.Errorf("two waits for marks in the log read it %d times, want 1", reads)
	}
}

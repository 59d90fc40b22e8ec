package postgres

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/store"
)

// woken waits (up to a bound that only catches a hang) for ch to wake and
// returns the keys it heard (nil for a wake that names none).
func woken(t *testing.T, ch <-chan []string, what string) []string {
	t.Helper()
	select {
	case keys := <-ch:
		return keys
	case <-time.After(time.Minute):
		t.Fatalf("%s: the watch was not woken", what)
	}
	return nil
}

// isOpen reports whether ch is still open.
func isOpen(ch <-chan []string) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// TestWatchClaims: a watch on a conversation's claim log is woken by an
// entry another process claims in that conversation, not by one in
// another conversation, nor by a key outside the watch's prefix; every watch is woken when the listening
// connection breaks (a restart), and the watcher listens again after;
// a closed store wakes its watches at once.
func TestWatchClaims(t *testing.T) {
	dsn := server.DSN(t)
	watcher, writer := openTest(t, dsn), openTest(t, dsn)
	ctx := context.Background()
	claim := func(conv, key string) {
		t.Helper()
		if _, err := writer.Claim(ctx, conv, []store.Claim{{Key: key, Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	// The first watch starts the listener, which wakes every watch once
	// it listens (what was claimed before went unheard).
	first, stop := watcher.WatchClaims("a", "")
	woken(t, first, "listening")
	stop()

	a, stopA := watcher.WatchClaims("a", "")
	b, stopB := watcher.WatchClaims("b", "")
	claim("b", "k1")
	woken(t, b, "an entry of b")
	stopB()
	if !isOpen(a) {
		t.Fatal("an entry of b woke the watch of a")
	}
	claim("a", "k1")
	woken(t, a, "an entry of a")
	stopA()

	// A watch of a key prefix is woken by a key of that prefix only.
	marks, stopMarks := watcher.WatchClaims("a", "s|")
	claim("a", "d|call|1")
	any, stopAny := watcher.WatchClaims("a", "")
	claim("a", "d|call|2")
	woken(t, any, "an entry of a")
	stopAny()
	if !isOpen(marks) {
		t.Fatal("a decision woke the watch of marks")
	}
	claim("a", "s|replica|1")
	if keys := woken(t, marks, "a mark"); !slices.Equal(keys, []string{"s|replica|1"}) {
		t.Errorf("the watch of marks heard %q, want the mark", keys)
	}
	stopMarks()

	stopped, stopS := watcher.WatchClaims("a", "")
	stopS()
	claim("a", "k2")
	if !isOpen(stopped) {
		t.Error("a stopped watch was woken")
	}

	broken, stopBroken := watcher.WatchClaims("a", "")
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if keys := woken(t, broken, "a restart"); keys != nil {
		t.Errorf("a restart's wake names keys %q", keys)
	}
	stopBroken()
	// Listening again: an entry of a wakes a's watch and not b's (a
	// wake of every watch is the reconnection's, not an entry's).
	deadline := time.Now().Add(time.Minute)
	for i := 0; ; i++ {
		a, stopA := watcher.WatchClaims("a", "")
		b, stopB := watcher.WatchClaims("b", "")
		for {
			_, err := writer.Claim(ctx, "a", []store.Claim{{Key: fmt.Sprintf("after-%d", i), Value: []byte("v")}})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("claiming after the restart: %v", err)
			}
			time.Sleep(100 * time.Millisecond) // the writer's pool reconnects
		}
		woken(t, a, "an entry after the restart")
		heard := isOpen(b)
		stopA()
		stopB()
		if heard {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the restart, no entry was heard")
		}
	}

	watcher.Close()
	closed, stopClosed := watcher.WatchClaims("a", "")
	defer stopClosed()
	if isOpen(closed) {
		t.Error("a closed store's watch is not woken at once")
	}
}

// FuzzNotice: a notice names its conversation and every key it was made
// of, or, over the payload's limit, the conversation alone.
func FuzzNotice(f *testing.F) {
	f.Add("t1-px-abc", "d|call_1|00ff", "s|r|1")
	f.Add("", "", "")
	f.Add("conv with spaces", "k\x00ey", strings.Repeat("x", 5000))
	f.Fuzz(func(t *testing.T, conv, k1, k2 string) {
		got, keys := parseNotice(notice(conv, [][]byte{[]byte(k1), []byte(k2)}))
		if want := hex.EncodeToString([]byte(conv)); got != want && !(conv == "" && got == "") {
			t.Fatalf("conversation %q, want %q", got, want)
		}
		if len(notice(conv, [][]byte{[]byte(k1), []byte(k2)})) > maxNotice && 2*len(conv) <= maxNotice {
			t.Fatalf("a notice of %d bytes", len(notice(conv, [][]byte{[]byte(k1), []byte(k2)})))
		}
		if keys != nil && (len(keys) != 2 || keys[0] != k1 || keys[1] != k2) {
			t.Fatalf("keys %q, want %q and %q", keys, k1, k2)
		}
	})
}

// TestQuietClaims: an entry claimed Quiet is in the log but wakes no
// watch; a claim mixing quiet and other entries names only the others.
func TestQuietClaims(t *testing.T) {
	dsn := server.DSN(t)
	watcher, writer := openTest(t, dsn), openTest(t, dsn)
	ctx := context.Background()
	first, stop := watcher.WatchClaims("q", "")
	woken(t, first, "listening")
	stop()

	w, stopW := watcher.WatchClaims("q", "")
	defer stopW()
	if _, err := writer.Claim(ctx, "q", []store.Claim{{Key: "x", Value: []byte("v"), Quiet: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Claim(ctx, "q", []store.Claim{{Key: "y", Value: []byte("v"), Quiet: true}, {Key: "z", Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	// Notices arrive in commit order: had the quiet claim notified, its
	// key would be heard first.
	if keys := woken(t, w, "the mixed claim"); !slices.Equal(keys, []string{"z"}) {
		t.Errorf("the first wake heard %q, want only the loud key z", keys)
	}
	got, err := writer.Claims(ctx, "q", 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range got {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"x", "y", "z"}) {
		t.Errorf("the log holds %q, want x, y, z", keys)
	}
}

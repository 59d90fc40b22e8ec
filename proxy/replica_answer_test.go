package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
)

// TestReplicaGoesOnBeforeTheAnswerClaim: a request that follows another
// replica's tool call does not wait for that call's answer claim. The
// first replica's answer claims are held back until the second request
// has been answered: the second replica reads the claim log once for it
// (waiting would read it again), and the stored rounds and turn still get
// every call's usage and answer time once the claims come (the recorder
// fills them in).
func TestReplicaGoesOnBeforeTheAnswerClaim(t *testing.T) {
	wc := wireCases[0]
	held := &heldAnswers{release: make(chan struct{})}
	released := false
	var pathReads atomic.Int64
	r := newReplicaRigWith(t, 2, true, nil, func(i int, cs *countingStore) store.Store {
		if i == 0 {
			return heldStore{cs, held}
		}
		return pathCountingStore{cs, &pathReads}
	})
	t.Cleanup(func() {
		if !released {
			close(held.release)
		}
	})
	usage := wiretest.Usage{Input: 100, Output: 10}
	r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "call_0", Name: "Bash", Args: `{"command":"ls"}`}}, usage),
		wc.reply("m", "", []wiretest.Call{{ID: "call_1", Name: "Bash", Args: `{"command":"ls -a"}`}}, usage),
		wc.reply("m", "done", nil, usage))
	post := func(url string, steps []step) {
		t.Helper()
		resp, err := http.Post(url+wc.path, "application/json", bytes.NewReader(wc.body("m", "list the files", steps)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	steps := []step{{id: "call_0", tool: "Bash", args: `{"command":"ls"}`, result: "a\nb\n"}}
	post(r.urls[0], nil)
	post(r.urls[1], steps) // replica 0's answer claim is still held
	if n := pathReads.Load(); n != 1 {
		t.Errorf("the request after another replica's call read the claim log %d times on its path, want 1 (no wait for the answer claim)", n)
	}
	close(held.release)
	released = true
	steps = append(steps, step{id: "call_1", tool: "Bash", args: `{"command":"ls -a"}`, result: ".\n..\na\nb\n"})
	post(r.urls[0], steps)
	for _, px := range r.pxs {
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	_, conv := storedConversation(t, r.dsn)
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 3 {
		t.Fatalf("stored %d turns; want 1 of 3 rounds", len(conv.Turns))
	}
	for _, rd := range conv.Turns[0].Rounds {
		if rd.Usage.Input != 100 || rd.Usage.Output != 10 || rd.Answered.IsZero() {
			t.Errorf("round %d stored with usage %+v answered %v; want the upstream's usage and a time", rd.Index, rd.Usage, rd.Answered)
		}
	}
	if u := conv.Turns[0].Usage; u != (harness.Usage{Input: 300, Output: 30}) {
		t.Errorf("the turn's usage is %+v, want the sum of its 3 rounds", u)
	}
}

// pathCountingStore counts the claim-log reads made on a request's path
// (awaitClaims), not the recorder's.
type pathCountingStore struct {
	*countingStore
	n *atomic.Int64
}

func (s pathCountingStore) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, ".awaitClaims") {
			s.n.Add(1)
			break
		}
		if !more {
			break
		}
	}
	return s.countingStore.Claims(ctx, conv, after)
}

// TestNeedsAnswer: a request waits for another replica's answer only when
// the round it carries ended an earlier turn, or began longer ago than
// the shortest idle clear.
func TestNeedsAnswer(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	hist := func(rounds ...int) *history {
		h := &history{}
		for _, n := range rounds {
			h.Turns = append(h.Turns, &histTurn{Rounds: make([]*histRound, n)})
		}
		return h
	}
	tests := []struct {
		name    string
		h       *history
		pending map[roundKey]time.Time
		idle    time.Duration
		want    bool
	}{
		{"none pending", hist(2), nil, time.Minute, false},
		{"the last round of the last turn, just begun", hist(2), map[roundKey]time.Time{{1, 2}: now.Add(-time.Second)}, time.Minute, false},
		{"the last turn, begun long ago", hist(2), map[roundKey]time.Time{{1, 2}: now.Add(-2 * time.Minute)}, time.Minute, true},
		{"begun long ago, no idle clear", hist(2), map[roundKey]time.Time{{1, 2}: now.Add(-2 * time.Minute)}, 0, false},
		{"an earlier turn's answer", hist(2, 0), map[roundKey]time.Time{{1, 2}: now.Add(-time.Second)}, time.Minute, true},
		{"a round the history does not carry", hist(1), map[roundKey]time.Time{{1, 2}: now.Add(-2 * time.Minute)}, time.Minute, false},
		{"a turn the history does not carry", hist(2), map[roundKey]time.Time{{2, 1}: now.Add(-2 * time.Minute)}, time.Minute, false},
	}
	for _, tt := range tests {
		if got := needsAnswer(tt.h, tt.pending, now, tt.idle); got != tt.want {
			t.Errorf("%s: needsAnswer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestLastAnswer: a call another replica began and has not answered moves
// the conversation's last answer to its start, so a pause is never
// measured from an older answer.
func TestLastAnswer(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	cv := &conversation{answered: t0, times: map[roundKey]time.Time{{1, 1}: t0},
		started: map[roundKey]time.Time{{1, 1}: t0.Add(-time.Second), {1, 2}: t0.Add(time.Minute)}}
	if got := cv.lastAnswer(); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("lastAnswer = %v, want the unanswered start %v", got, t0.Add(time.Minute))
	}
	cv.times[roundKey{1, 2}], cv.answered = t0.Add(2*time.Minute), t0.Add(2*time.Minute)
	if got := cv.lastAnswer(); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("lastAnswer = %v, want the answer %v", got, t0.Add(2*time.Minute))
	}
}

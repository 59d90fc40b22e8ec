package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/tokens"
)

// lengthsCounter counts with the real tokenizer and remembers the length
// of every text it was given.
type lengthsCounter struct {
	bpe     tokens.Counter
	mu      sync.Mutex
	lengths []int
}

func (c *lengthsCounter) Count(text string) int {
	c.mu.Lock()
	c.lengths = append(c.lengths, len(text))
	c.mu.Unlock()
	return c.bpe.Count(text)
}

// long counts the texts of at least n bytes it was given.
func (c *lengthsCounter) long(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := 0
	for _, l := range c.lengths {
		if l >= n {
			k++
		}
	}
	return k
}

// TestReplicasCountACutOnce: two replicas serve one conversation
// alternately, each request carrying every earlier (cut) result. Each
// result's full text goes through a tokenizer once across both replicas
// (the replica that cut it counts it and claims the count with its answer),
// not once per replica that forwards it, and every call's tokens saved
// are what the tokenizer gives for the results as the client sent them
// minus the copies forwarded.
func TestReplicasCountACutOnce(t *testing.T) {
	r := newReplicaRig(t, 2, true)
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	counters := []*lengthsCounter{{bpe: bpe}, {bpe: bpe}}
	for i, px := range r.pxs {
		px.savings.count = counters[i]
	}
	wc := wireCases[0]
	const rounds = 6
	bodies, _ := r.readLockFiles(t, wc, rounds)
	if n := counters[0].long(30<<10) + counters[1].long(30<<10); n != rounds {
		t.Errorf("the replicas tokenized %d texts of 30 KiB or more; want %d, one per result", n, rounds)
	}
	// Each call's saving, as a tokenizer counts the two bodies.
	sent := toolResultsSent(t, r.up.Requests())
	var want []int64
	for i, body := range bodies {
		var n int64
		for id, lit := range toolResultsSent(t, []wiretest.Request{{Body: body}})[0] {
			if sent[i][id] != lit {
				n += literalTokens(t, bpe, lit) - literalTokens(t, bpe, sent[i][id])
			}
		}
		want = append(want, n)
	}
	rows, err := r.pxs[0].savings.log.Savings(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d savings stored, want %d", len(rows), len(want))
	}
	got := map[int64]int{}
	for _, s := range rows {
		got[s.TokensSaved]++
	}
	for i, w := range want {
		if got[w] == 0 {
			t.Errorf("call %d saved %d tokens; stored: %v", i+1, w, got)
		}
		got[w]--
	}
	if want[rounds] <= want[1] || want[1] <= 0 {
		t.Fatalf("savings %v: the fixture should cut every result", want)
	}
}

// literalTokens counts a JSON value's tokens as savings counts a span: a
// string as the text it holds.
func literalTokens(t *testing.T, c tokens.Counter, lit string) int64 {
	t.Helper()
	text := lit
	var s string
	if json.Unmarshal([]byte(lit), &s) == nil {
		text = s
	}
	return int64(c.Count(text))
}

// gatedCounter is the real tokenizer holding every text of at least 30
// KiB until gate is closed.
type gatedCounter struct {
	bpe  tokens.Counter
	gate chan struct{}
}

func (c *gatedCounter) Count(text string) int {
	if len(text) >= 30<<10 {
		<-c.gate
	}
	return c.bpe.Count(text)
}

// TestReplicaCountsOffThePath: the replica that cuts a result counts its
// tokens while the request is upstream, not before forwarding it: with
// the tokenizer held, the request still reaches the upstream; released,
// the call's saving is the cut's tokens.
func TestReplicaCountsOffThePath(t *testing.T) {
	r := newReplicaRig(t, 1, true)
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	px := r.pxs[0]
	gc := &gatedCounter{bpe: bpe, gate: make(chan struct{})}
	px.savings.count = gc
	wc := wireCases[0]
	args := `{"command":"cat package-lock.json"}`
	r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: "call_0", Name: "Bash", Args: args}}, wiretest.Usage{Input: 100, Output: 10}),
		wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
	post := func(body []byte) error {
		code, err := postTo(r.urls[0]+wc.path, body)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		return err
	}
	if err := post(wc.body("m", "read the lock file", nil)); err != nil {
		t.Fatal(err)
	}
	steps := []step{{id: "call_0", tool: "Bash", args: args, result: lockFile(30 << 10)}}
	done := make(chan error, 1)
	go func() { done <- post(wc.body("m", "read the lock file", steps)) }()
	// Only a hang fails here: the request must reach the upstream while
	// the tokenizer holds the result.
	for deadline := time.Now().Add(time.Minute); len(r.up.Requests()) < 2; {
		if time.Now().After(deadline) {
			close(gc.gate)
			t.Fatal("the request with a cut result did not reach the upstream while its tokens were being counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(gc.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := toolResultsSent(t, r.up.Requests())[1]["call_0"]
	in := toolResultsSent(t, []wiretest.Request{{Body: wc.body("m", "read the lock file", steps)}})[0]["call_0"]
	if sent == in {
		t.Fatal("the fixture's result was not cut")
	}
	want := literalTokens(t, bpe, in) - literalTokens(t, bpe, sent)
	rows, err := px.savings.log.Savings(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range rows {
		got = append(got, s.TokensSaved)
	}
	if !slices.Contains(got, want) {
		t.Errorf("savings %v; want one of %d tokens (the cut's)", got, want)
	}
}

package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
)

// gatedStore holds every turn write until open is closed: a replica
// whose writes reach the store late (a slow or busy database); with err
// set, it fails them all (a replica that dies with its queue).
type gatedStore struct {
	*countingStore
	open chan struct{}
	err  error
}

func (g *gatedStore) wait(ctx context.Context) error {
	if g.err != nil {
		return g.err
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedStore) BeginTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if err := g.wait(ctx); err != nil {
		return err
	}
	return g.countingStore.BeginTurn(ctx, conv, turn)
}

func (g *gatedStore) ResumeTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if err := g.wait(ctx); err != nil {
		return err
	}
	return g.countingStore.ResumeTurn(ctx, conv, turn)
}

func (g *gatedStore) AddRound(ctx context.Context, conv *harness.Conversation, turn *harness.Turn, round *harness.Round) error {
	if err := g.wait(ctx); err != nil {
		return err
	}
	return g.countingStore.AddRound(ctx, conv, turn, round)
}

func (g *gatedStore) EndTurn(ctx context.Context, conv *harness.Conversation, turn *harness.Turn) error {
	if err := g.wait(ctx); err != nil {
		return err
	}
	return g.countingStore.EndTurn(ctx, conv, turn)
}

// TestReplicaDoesNotWaitForWrites: two replicas serve one conversation
// alternately while every write of replica 0 is held. Each request is
// answered without reading the conversation back from the store (replica
// 0 looks for it once, when it is new): the replica builds the rounds the
// other one recorded from the request's history and the claim log. Once the writes go through, every round and the turn's end are
// stored once, in order, with the upstream's usage, and nothing failed.
// Before mirror claims, each request read the conversation again once
// the other replica's writes were stored (or replicaWait had passed).
func TestReplicaDoesNotWaitForWrites(t *testing.T) {
	open := make(chan struct{})
	r := newReplicaRigWith(t, 2, true, nil, func(i int, cs *countingStore) store.Store {
		if i == 0 {
			return &gatedStore{countingStore: cs, open: open}
		}
		return cs
	})
	const rounds = 7
	converse(t, r, rounds)
	for i, cs := range r.calls {
		// Replica 0 looks for the new conversation in the store.
		if n, want := cs.loads.Load(), int64(1-i); n != want {
			t.Errorf("replica %d read the conversation from the store %d times while replica 0's writes were held, want %d", i, n, want)
		}
	}
	close(open)
	for _, px := range r.pxs {
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range r.logs {
		if s := l.String(); strings.Contains(s, "recording:") || strings.Contains(s, "not recorded") {
			t.Errorf("replica %d:\n%s", i, s)
		}
	}
	checkOneTurn(t, r.dsn, rounds+1)
}

// checkOneTurn checks that the store holds one conversation of one
// answered turn whose rounds (each with one result but the last, and the
// usage the test's upstream reported, 100 input tokens more the round's
// index) are stored once each, in order.
func checkOneTurn(t *testing.T, dsn string, rounds int) {
	t.Helper()
	_, conv := storedConversation(t, dsn)
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds {
		t.Fatalf("stored %d turns, the first with %d rounds; want 1 turn of %d rounds", len(conv.Turns), len(conv.Turns[0].Rounds), rounds)
	}
	turn := conv.Turns[0]
	if turn.Outcome != harness.Answered {
		t.Errorf("turn outcome %q, want %q", turn.Outcome, harness.Answered)
	}
	total := 0
	for i, rd := range turn.Rounds {
		total += 100 + i
		want := 1
		if i == rounds-1 {
			want = 0
		}
		if rd.Index != i+1 || len(rd.Results) != want || rd.Usage.Input != 100+i {
			t.Errorf("round %d: index %d, %d results, input tokens %d; want %d results and %d tokens", i+1, rd.Index, len(rd.Results), rd.Usage.Input, want, 100+i)
		}
	}
	if turn.Usage.Input != total {
		t.Errorf("turn usage %d input tokens, want %d (the rounds')", turn.Usage.Input, total)
	}
}

// TestReplicaWritesWhatAnotherLost: replica 0 loses every write (as a
// replica that dies with its queue), so it never marks its mirror claims
// stored. Replica 1, serving every other request, waits for the marks
// for markWait, then writes the turn and the rounds replica 0 recorded
// itself: once the writes settle, every round is stored once, in order.
func TestReplicaWritesWhatAnotherLost(t *testing.T) {
	r := newReplicaRigWith(t, 2, true, nil, func(i int, cs *countingStore) store.Store {
		if i == 0 {
			return &gatedStore{countingStore: cs, err: errors.New("the replica is gone")}
		}
		return cs
	})
	r.pxs[1].replicas.markWait.Store(int64(50 * time.Millisecond))
	const rounds = 7 // the last request (the answer) on replica 1
	converse(t, r, rounds)
	for _, px := range r.pxs {
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	checkOneTurn(t, r.dsn, rounds+1)
}

// converse runs one turn of rounds rounds with a tool call each, then an
// answer, its requests alternating between the rig's first two replicas.
func converse(t *testing.T, r *replicaRig, rounds int) {
	t.Helper()
	wc := wireCases[0]
	for i := range rounds {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}, wiretest.Usage{Input: 100 + i, Output: 10}))
	}
	r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100 + rounds, Output: 10}))
	var steps []step
	for i := range rounds + 1 {
		resp, err := http.Post(r.urls[i%2]+wc.path, "application/json", bytes.NewReader(wc.body("m", "read the lock files", steps)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
		}
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{"command":"cat package-lock.json"}`,
			result: lockFile(30<<10) + fmt.Sprintf("\nround %d\n", i)})
	}
}

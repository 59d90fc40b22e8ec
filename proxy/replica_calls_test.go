package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
)

// replicaStore is what a replica uses of the PostgreSQL store.
type replicaStore interface {
	store.Store
	store.Claimer
	store.ClaimWatcher
	store.SavingsLog
	recordStore
}

// countingStore counts a replica's reads of conversations and calls to
// the claim log (each one round trip to PostgreSQL: TestRoundTrips
// in store/postgres).
type countingStore struct {
	replicaStore
	loads, decisions, reads, claims atomic.Int64
}

func (s *countingStore) Load(ctx context.Context, id string) (*harness.Conversation, error) {
	s.loads.Add(1)
	return s.replicaStore.Load(ctx, id)
}

func (s *countingStore) Decisions(ctx context.Context, conv string) ([]store.Decision, error) {
	s.decisions.Add(1)
	return s.replicaStore.Decisions(ctx, conv)
}

func (s *countingStore) Claims(ctx context.Context, conv string, after int64) ([]store.Claim, error) {
	s.reads.Add(1)
	return s.replicaStore.Claims(ctx, conv, after)
}

func (s *countingStore) Claim(ctx context.Context, conv string, entries []store.Claim) ([]store.Claim, error) {
	s.claims.Add(1)
	return s.replicaStore.Claim(ctx, conv, entries)
}

// storeCalls is a count of calls to the store.
type storeCalls struct{ loads, decisions, reads, claims int64 }

func (s *countingStore) snapshot() storeCalls {
	return storeCalls{s.loads.Load(), s.decisions.Load(), s.reads.Load(), s.claims.Load()}
}

// TestReplicaStoreCallsPerRequest counts what a replica asks the store
// for one request of a conversation, the other replicas' writes settled:
// the request's path makes one read of the claim log and one claim (the
// request's decisions, its start and what it added to the mirror), and
// two claims more off the path (its answer, and the mark that the
// request's writes are stored). A replica that did not serve the
// conversation's previous request builds what that one recorded from the
// request's history and the log, reading nothing more from the store,
// and so does a replica that first sees a conversation whose log holds
// it from its start.
func TestReplicaStoreCallsPerRequest(t *testing.T) {
	tests := []struct {
		name  string
		serve func(i int) int // the replica serving request i
		// first and later are the calls of a replica's first request of
		// the conversation (after the first) and of its later ones.
		first, later storeCalls
	}{
		{"one replica", func(int) int { return 0 }, storeCalls{0, 0, 1, 3}, storeCalls{0, 0, 1, 3}},
		{"alternating", func(i int) int { return i % 2 }, storeCalls{0, 0, 1, 3}, storeCalls{0, 0, 1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReplicaRig(t, 2, true)
			wc := wireCases[0]
			const rounds = 6
			for i := range rounds {
				r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}, wiretest.Usage{Input: 100, Output: 10}))
			}
			var steps []step
			seen := map[int]bool{}
			for i := range rounds {
				n := tt.serve(i)
				before := r.calls[n].snapshot()
				resp, err := http.Post(r.urls[n]+wc.path, "application/json", bytes.NewReader(wc.body("m", "read the lock files", steps)))
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
				}
				for _, px := range r.pxs {
					if err := px.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				after := r.calls[n].snapshot()
				got := storeCalls{after.loads - before.loads, after.decisions - before.decisions, after.reads - before.reads, after.claims - before.claims}
				want := tt.later
				if !seen[n] {
					want = tt.first
				}
				if i > 0 && got != want {
					t.Errorf("request %d on replica %d: %+v calls to the store (loads, decisions, claim-log reads, claims), want %+v", i+1, n, got, want)
				}
				seen[n] = true
				steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{"command":"cat package-lock.json"}`,
					result: lockFile(30<<10) + fmt.Sprintf("\nround %d\n", i)})
			}
		})
	}
}

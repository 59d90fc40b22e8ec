package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
)

// TestReplicasRecordEachRequest: a conversation of four tool rounds and a
// final answer, served by one replica, then by two replicas alternately.
// The replica that stores a round (the one the next request reaches) is
// not the one that served the round's request, yet every stored round
// keeps what its request offered (the system prompt and the tool list the
// client sent), as it does with one replica.
func TestReplicasRecordEachRequest(t *testing.T) {
	const rounds = 4
	one := replicaRequests(t, 1, rounds)
	two := replicaRequests(t, 2, rounds)
	if len(one) != rounds+1 || len(two) != rounds+1 {
		t.Fatalf("%d and %d requests stored with one and two replicas, want %d", len(one), len(two), rounds+1)
	}
	for i, q := range two {
		o := one[i]
		if !o.Recorded || o.System != "You are a test agent." || !slices.Equal(o.ToolNames(), []string{"Bash"}) {
			t.Fatalf("one replica: turn %d round %d stored as recorded=%v system=%q tools=%v", o.Turn, o.Round, o.Recorded, o.System, o.ToolNames())
		}
		if q.Turn != o.Turn || q.Round != o.Round || q.Recorded != o.Recorded || q.System != o.System || q.ToolSet != o.ToolSet ||
			!slices.Equal(q.ToolNames(), o.ToolNames()) {
			t.Errorf("two replicas: turn %d round %d stored as recorded=%v system=%q tools=%v; one replica stores recorded=%v system=%q tools=%v",
				q.Turn, q.Round, q.Recorded, q.System, q.ToolNames(), o.Recorded, o.System, o.ToolNames())
		}
	}
}

// replicaRequests runs the conversation through n replicas, request i
// reaching replica i mod n, and returns the requests the store holds.
func replicaRequests(t *testing.T, n, rounds int) []store.Request {
	t.Helper()
	r := newReplicaRig(t, n, true)
	wc := wireCases[0]
	for i := range rounds {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{}`}}, wiretest.Usage{Input: 100, Output: 10}))
	}
	r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
	var steps []step
	for i := range rounds + 1 {
		resp, err := http.Post(r.urls[i%n]+wc.path, "application/json", bytes.NewReader(wc.body("m", "read the lock files", steps)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
		}
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{}`, result: fmt.Sprintf("round %d\n", i)})
	}
	ctx := context.Background()
	for _, px := range r.pxs {
		if err := px.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st, err := postgres.Open(ctx, r.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("%d replica(s): %d conversations stored (%v), want 1", n, len(list), err)
	}
	reqs, err := st.Requests(ctx, list[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/pgtest"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
)

// pgServer is the throwaway PostgreSQL cluster of the replica tests
// (pgtest: skipped without PostgreSQL, failed when CI is set).
var pgServer pgtest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	pgServer.Stop()
	os.Exit(code)
}

// replicaRig is several proxies sharing one PostgreSQL database, one
// upstream and one spill folder, each on its own listener, as processes
// behind a load balancer.
type replicaRig struct {
	up   *wiretest.Server
	ws   string
	dsn  string
	pxs  []*Proxy
	urls []string
	logs []*syncWriter
	// calls counts each replica's calls to the store.
	calls []*countingStore
}

func newReplicaRig(t *testing.T, n int, shared bool) *replicaRig {
	return newReplicaRigAt(t, n, shared, nil)
}

// newReplicaRigAt is newReplicaRig with the replicas' clock (nil: time.Now).
func newReplicaRigAt(t *testing.T, n int, shared bool, now func() time.Time) *replicaRig {
	return newReplicaRigWith(t, n, shared, now, nil)
}

// newReplicaRigWith is newReplicaRigAt with wrap (nil: none) giving
// replica i the store it uses in place of its counting store.
func newReplicaRigWith(t *testing.T, n int, shared bool, now func() time.Time, wrap func(i int, cs *countingStore) store.Store) *replicaRig {
	t.Helper()
	r := &replicaRig{up: wiretest.New(t), ws: t.TempDir(), dsn: pgServer.DSN(t)}
	for i := range n {
		st, err := postgres.Open(context.Background(), r.dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		rs, ok := any(st).(replicaStore)
		if !ok {
			t.Fatalf("the PostgreSQL store is no replicaStore")
		}
		cs := &countingStore{replicaStore: rs}
		log := &syncWriter{w: &bytes.Buffer{}}
		var use store.Store = cs
		if wrap != nil {
			use = wrap(i, cs)
		}
		px, err := New(&Options{Upstream: r.up.URL, Store: use, Workspace: r.ws, Log: log, Shared: shared, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(px)
		t.Cleanup(srv.Close)
		t.Cleanup(func() { px.Close() })
		r.pxs, r.urls, r.logs, r.calls = append(r.pxs, px), append(r.urls, srv.URL), append(r.logs, log), append(r.calls, cs)
	}
	return r
}

// toolResultsSent returns, for every upstream request in order, the
// content each tool_result carried, by call id.
func toolResultsSent(t *testing.T, reqs []wiretest.Request) []map[string]string {
	var out []map[string]string
	for _, q := range reqs {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(q.Body, &body); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range body.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool_result" {
					got[b.ToolUseID] = string(b.Content)
				}
			}
		}
		out = append(out, got)
	}
	return out
}

// readLockFiles serves one conversation of rounds rounds, each reading a
// 30 KiB lock file (cut by the ceiling), then a final answer, its
// requests on the rig's replicas in turn, and waits for every replica's
// writes. It returns each request's body and the steps the last carried.
func (r *replicaRig) readLockFiles(t *testing.T, wc wireCase, rounds int) (bodies [][]byte, steps []step) {
	t.Helper()
	for i := range rounds {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}, wiretest.Usage{Input: 100, Output: 10}))
	}
	r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
	for i := range rounds + 1 {
		body := wc.body("m", "read the lock files", steps)
		bodies = append(bodies, body)
		resp, err := http.Post(r.urls[i%len(r.urls)]+wc.path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{"command":"cat package-lock.json"}`,
			result: lockFile(30<<10) + fmt.Sprintf("\nround %d\n", i)})
	}
	for _, px := range r.pxs {
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return bodies, steps
}

// storedConversation opens the rig's database (closed with t) and returns
// it with the one conversation it holds, failing t when it holds another
// number.
func storedConversation(t *testing.T, dsn string) (store.DB, *harness.Conversation) {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	list, err := st.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("stored conversations: %d (%v), want 1", len(list), err)
	}
	conv, err := st.Load(context.Background(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return st, conv
}

// TestReplicasSendTheSameBytes: two proxies on one PostgreSQL serve one
// conversation alternately, a request on each in turn. Every tool result
// is sent upstream with the same bytes in every request after the first
// that carries it (cut results included), and every round is stored once.
// Unshared, the replica that did not decide a result decides it again
// (with the turn budget of its own request), and the bytes differ.
func TestReplicasSendTheSameBytes(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			r := newReplicaRig(t, 2, shared)
			wc := wireCases[0]
			const rounds = 6
			r.readLockFiles(t, wc, rounds)
			for i, l := range r.logs {
				t.Logf("replica %d:\n%s", i, l.String())
			}
			sent := toolResultsSent(t, r.up.Requests())
			differ := 0
			for i := 1; i < len(sent); i++ {
				for id, content := range sent[i-1] {
					if sent[i][id] != content {
						differ++
						if shared {
							t.Errorf("request %d sent %s with other bytes than request %d (%d vs %d bytes)", i+1, id, i, len(sent[i][id]), len(content))
						}
					}
				}
			}
			if !shared {
				if differ == 0 {
					t.Errorf("unshared replicas sent every result alike: the test shows nothing")
				}
				return
			}
			_, conv := storedConversation(t, r.dsn)
			if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds+1 {
				t.Fatalf("stored %d turns, the first with %d rounds; want 1 turn of %d rounds", len(conv.Turns), len(conv.Turns[0].Rounds), rounds+1)
			}
			for i, rd := range conv.Turns[0].Rounds {
				want := 1
				if i == rounds {
					want = 0
				}
				if rd.Index != i+1 || len(rd.Results) != want {
					t.Errorf("round %d: index %d with %d results, want %d", i+1, rd.Index, len(rd.Results), want)
				}
				if rd.Usage.Input != 100 {
					t.Errorf("round %d: usage %+v, want the upstream's", i+1, rd.Usage)
				}
			}
		})
	}
}

// TestReplicasFailOpen: PostgreSQL goes down in the middle of a
// conversation served by two replicas. Every request is still forwarded
// and answered, each replica logs the outage once (and its end once),
// and once PostgreSQL is back every round is recorded: none lost, none
// twice.
func TestReplicasFailOpen(t *testing.T) {
	r := newReplicaRig(t, 2, true)
	wc := wireCases[0]
	const rounds = 8
	for i := range rounds {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{}`}}, wiretest.Usage{Input: 100, Output: 10}))
	}
	r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
	var steps []step
	for i := range rounds + 1 {
		switch i {
		case 3:
			if err := pgServer.Down(); err != nil {
				t.Fatal(err)
			}
		case 6:
			if err := pgServer.Up(); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.Post(r.urls[i%2]+wc.path, "application/json", bytes.NewReader(wc.body("m", "read the lock files", steps)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
		}
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{}`, result: lockFile(30<<10) + fmt.Sprintf("\nround %d\n", i)})
	}
	for _, px := range r.pxs {
		if err := px.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range r.logs {
		t.Logf("replica %d:\n%s", i, l.String())
	}
	if n := len(r.up.Requests()); n != rounds+1 {
		t.Errorf("the upstream got %d requests, want %d", n, rounds+1)
	}
	for i, l := range r.logs {
		s := l.String()
		if n := strings.Count(s, "the store does not answer"); n != 1 {
			t.Errorf("replica %d logged the outage %d times, want once:\n%s", i, n, s)
		}
		if n := strings.Count(s, "the store answers again"); n != 1 {
			t.Errorf("replica %d logged the end of the outage %d times, want once:\n%s", i, n, s)
		}
	}
	_, conv := storedConversation(t, r.dsn)
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds+1 {
		t.Fatalf("stored %d turns, the first with %d rounds; want 1 turn of %d rounds", len(conv.Turns), len(conv.Turns[0].Rounds), rounds+1)
	}
	for i, rd := range conv.Turns[0].Rounds {
		if rd.Index != i+1 {
			t.Errorf("stored round %d has index %d", i+1, rd.Index)
		}
	}
}

// TestReplicasAgreeOnIdleClears: after a pause longer than the cache
// lives, the replica that serves the next request clears old results;
// the other replica, serving the request after, sends the same cleared
// bytes (no cache break at the upstream), and its idle pause is measured
// from the last answer of either replica, so it clears nothing more.
func TestReplicasAgreeOnIdleClears(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	r := newReplicaRigAt(t, 2, true, now)
	wc := wireCases[0]
	const rounds = 10
	for i := range rounds {
		r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{}`}}, wiretest.Usage{Input: 100, Output: 10}))
	}
	var steps []step
	for i := range rounds {
		mu.Lock()
		if i == 8 {
			clock = clock.Add(2 * time.Hour) // the cache has expired
		} else {
			clock = clock.Add(10 * time.Second)
		}
		mu.Unlock()
		resp, err := http.Post(r.urls[i%2]+wc.path, "application/json", bytes.NewReader(wc.body("m", "read the lock files", steps)))
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
		steps = append(steps, step{id: fmt.Sprintf("call_%d", i), tool: "Bash", args: `{}`, result: lockFile(8<<10) + fmt.Sprintf("\nround %d\n", i)})
	}
	sent := toolResultsSent(t, r.up.Requests())
	cleared := 0
	for id, content := range sent[8] {
		if content != sent[7][id] {
			cleared++
		}
		if sent[9][id] != content {
			t.Errorf("request 10 (replica 1) sent %s with other bytes than request 9 (replica 0) cleared it to", id)
		}
	}
	if cleared == 0 {
		t.Fatalf("the idle clear cleared nothing: the test shows nothing")
	}
	if s := r.pxs[1].Stats(); s.IdleClears != 0 || s.CacheBreaks != 0 {
		t.Errorf("replica 1: %d idle clears, %d cache breaks; want none (replica 0 cleared)", s.IdleClears, s.CacheBreaks)
	}
}

// TestReplicasOutageKeepsBytes: PostgreSQL is down while two replicas
// serve requests of one conversation alternately. A result the replica
// serving a request cannot read or claim is sent as the client sent it,
// which breaks the cache only for a result the other replica had decided
// just before (it cannot be read): once per request served during the
// outage at most, and none after it, where every replica sends what the
// last request sent. Every round is stored once.
func TestReplicasOutageKeepsBytes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		down, up   int // the outage spans requests [down, up)
		wantBreaks int
	}{
		{"one request", 3, 4, 1},
		{"three requests", 3, 6, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplicaRig(t, 2, true)
			wc := wireCases[0]
			const rounds = 9
			for i := range rounds {
				r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}, wiretest.Usage{Input: 100, Output: 10}))
			}
			r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
			var steps []step
			for i := range rounds + 1 {
				switch i {
				case tc.down:
					if err := pgServer.Down(); err != nil {
						t.Fatal(err)
					}
				case tc.up:
					if err := pgServer.Up(); err != nil {
						t.Fatal(err)
					}
				}
				if i < tc.down || i >= tc.up {
					// Settled (outside the outage: the replicas' writes
					// wait for the store inside it).
					for _, px := range r.pxs {
						if err := px.Flush(context.Background()); err != nil {
							t.Fatal(err)
						}
					}
				}
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
			for _, px := range r.pxs {
				if err := px.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			sent := toolResultsSent(t, r.up.Requests())
			breaks := 0
			for i := 1; i < len(sent); i++ {
				for id, content := range sent[i-1] {
					if sent[i][id] != content {
						breaks++
						t.Logf("request %d sent %s with other bytes than request %d (%d vs %d bytes)", i+1, id, i, len(sent[i][id]), len(content))
						if i >= tc.up {
							t.Errorf("request %d, after the outage, sent %s with other bytes than request %d", i+1, id, i)
						}
					}
				}
			}
			if breaks > tc.wantBreaks {
				t.Errorf("%d cache breaks, want at most %d (one per request served during the outage)", breaks, tc.wantBreaks)
			}
			_, conv := storedConversation(t, r.dsn)
			if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds+1 {
				t.Fatalf("stored %d turns, the first with %d rounds; want 1 turn of %d rounds", len(conv.Turns), len(conv.Turns[0].Rounds), rounds+1)
			}
		})
	}
}

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
	"testing"

	"github.com/agentharness/harness/internal/pgtest"
	"github.com/agentharness/harness/internal/wiretest"
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
}

func newReplicaRig(t *testing.T, n int, shared bool) *replicaRig {
	t.Helper()
	r := &replicaRig{up: wiretest.New(t), ws: t.TempDir(), dsn: pgServer.DSN(t)}
	for range n {
		st, err := postgres.Open(context.Background(), r.dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		log := &syncWriter{w: &bytes.Buffer{}}
		px, err := New(&Options{Upstream: r.up.URL, Store: st, Workspace: r.ws, Log: log, Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(px)
		t.Cleanup(srv.Close)
		t.Cleanup(func() { px.Close() })
		r.pxs, r.urls, r.logs = append(r.pxs, px), append(r.urls, srv.URL), append(r.logs, log)
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
			for i := range rounds {
				r.up.Enqueue(wc.reply("m", "", []wiretest.Call{{ID: fmt.Sprintf("call_%d", i), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}}, wiretest.Usage{Input: 100, Output: 10}))
			}
			r.up.Enqueue(wc.reply("m", "done", nil, wiretest.Usage{Input: 100, Output: 10}))
			var steps []step
			for i := range rounds + 1 {
				body := wc.body("m", "read the lock files", steps)
				resp, err := http.Post(r.urls[i%2]+wc.path, "application/json", bytes.NewReader(body))
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
			st, err := postgres.Open(context.Background(), r.dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			list, err := st.List(context.Background())
			if err != nil || len(list) != 1 {
				t.Fatalf("stored conversations: %d (%v), want 1", len(list), err)
			}
			conv, err := st.Load(context.Background(), list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
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

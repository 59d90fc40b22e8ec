package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store/postgres"
)

// holdUpstream is an Anthropic Messages upstream that answers every
// request with a tool call named after the request's message count, and
// can hold one answer mid-stream (after its first event) until released.
type holdUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	// hold, when set, holds the next answer; held is signalled when it
	// has sent its first event.
	hold    bool
	held    chan struct{}
	release chan struct{}
}

func newHoldUpstream(t *testing.T) *holdUpstream {
	u := &holdUpstream{held: make(chan struct{}, 1), release: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(func() {
		close(u.release)
		u.Close()
	})
	return u
}

func (u *holdUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	hold := u.hold
	u.hold = false
	u.mu.Unlock()
	call := wiretest.Call{ID: fmt.Sprintf("call_%d", len(req.Messages)/2), Name: "Bash", Args: `{"command":"cat package-lock.json"}`}
	reply := wiretest.AnthropicStream("m", "", []wiretest.Call{call}, wiretest.Usage{Input: 100, Output: 10})
	w.Header().Set("Content-Type", "text/event-stream")
	for i, e := range reply.Events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Event, e.Data)
		w.(http.Flusher).Flush()
		if i == 0 && hold {
			u.held <- struct{}{}
			select {
			case <-u.release:
			case <-r.Context().Done():
			}
			return
		}
	}
}

func (u *holdUpstream) sent() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.bodies...)
}

// replicaProc is one "harness proxy" process; name is the replica its
// first line names.
type replicaProc struct {
	cmd  *exec.Cmd
	url  string
	name string
	done chan struct{}
}

// startReplica starts "harness proxy" in its own process on the shared
// database and workspace, with the given extra flags.
func startReplica(t *testing.T, dsn, ws, upstream string, flags ...string) *replicaProc {
	t.Helper()
	args := append([]string{"proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--db", dsn, "--workspace", ws}, flags...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HARNESS_TEST_AS_CLI=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &replicaProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan [2]string, 1)
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (http://\S+),.*?(?:, as replica (\w+))?, spilling`)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- [2]string{m[1], m[2]}
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		logMu.Lock()
		defer logMu.Unlock()
		t.Logf("replica %s:\n%s", p.url, log.String())
	})
	select {
	case a := <-addr:
		p.url, p.name = a[0], a[1]
	case <-p.done:
		t.Fatalf("harness proxy exited: %s", log.String())
	case <-time.After(5 * time.Minute): // only catches a hang
		t.Fatal("harness proxy did not start")
	}
	return p
}

// stop stops the process gracefully (it records what it holds first).
func (p *replicaProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
}

// anthropicBody is a Claude-Code-like request: a prompt, then one round
// per result.
func anthropicBody(prompt string, results []string) []byte {
	msgs := []string{fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q}]}`, prompt)}
	for i, r := range results {
		id := fmt.Sprintf("call_%d", i)
		rj, _ := json.Marshal(r)
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"cat package-lock.json"}}]}`, id),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%s}]}`, id, rj))
	}
	return []byte(`{"model":"m","max_tokens":1024,"stream":true,"system":"you are a coding agent","messages":[` + strings.Join(msgs, ",") + `]}`)
}

// post sends body to a replica with the tenant's key and reads the whole
// answer.
func postReplica(url, key string, body []byte) error {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// resultsIn returns the content of each tool_result of an upstream body,
// by call id.
func resultsIn(t *testing.T, body []byte) map[string]string {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			ID      string          `json:"tool_use_id"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out[b.ID] = string(b.Content)
			}
		}
	}
	return out
}

// TestProxyReplicasPostgres runs two "harness proxy" processes on one
// PostgreSQL database. One conversation alternates between them: every
// tool result (each over the ceiling, so cut) is sent upstream with the
// same bytes in every request after the first that carries it. A replica
// killed mid-stream: the client's retry on the other one is sent upstream
// byte for byte as the first try was. Every round is stored once, and
// "harness log show" shows each one's request (its system prompt). Two
// credentials are two tenants: each one's /stats shows only its own
// conversation, a request without a credential sees nothing, and
// "harness log list --tenant" lists a tenant's conversations only.
func TestProxyReplicasPostgres(t *testing.T) {
	dsn := pgServer.DSN(t)
	ws := t.TempDir()
	up := newHoldUpstream(t)
	reps := []*replicaProc{startReplica(t, dsn, ws, up.URL), startReplica(t, dsn, ws, up.URL)}
	const alice, bob, rounds = "sk-alice-0001", "sk-bob-0002", 6
	var results []string
	for i := range rounds {
		if err := postReplica(reps[i%2].url, alice, anthropicBody("read the lock files", results)); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		results = append(results, lockFileText()[:40<<10]+fmt.Sprintf("\nround %d\n", i))
	}
	// Request 7 on replica 0, killed while its answer streams; the client
	// retries on replica 1.
	up.mu.Lock()
	up.hold = true
	up.mu.Unlock()
	body := anthropicBody("read the lock files", results)
	first := make(chan error, 1)
	go func() { first <- postReplica(reps[0].url, alice, body) }()
	<-up.held
	_ = reps[0].cmd.Process.Kill()
	<-reps[0].done
	if err := <-first; err == nil {
		t.Fatal("the request to the killed replica succeeded")
	}
	if err := postReplica(reps[1].url, alice, body); err != nil {
		t.Fatalf("retry on the other replica: %v", err)
	}
	if err := postReplica(reps[1].url, bob, anthropicBody("another task", nil)); err != nil {
		t.Fatal(err)
	}
	sent := up.sent()
	if len(sent) != rounds+3 {
		t.Fatalf("the upstream got %d requests, want %d", len(sent), rounds+3)
	}
	if !bytes.Equal(sent[rounds], sent[rounds+1]) {
		t.Errorf("the retry on the other replica was sent with other bytes (%d vs %d)", len(sent[rounds+1]), len(sent[rounds]))
	}
	for i := 1; i <= rounds; i++ {
		prev, cur := resultsIn(t, sent[i-1]), resultsIn(t, sent[i])
		for id, content := range prev {
			if cur[id] != content {
				t.Errorf("request %d sent %s with other bytes than request %d", i+1, id, i)
			}
		}
		if i > 1 && len(cur["call_0"]) >= len(results[0]) {
			t.Errorf("request %d: the first result was not cut (%d bytes)", i+1, len(cur["call_0"]))
		}
	}
	statsOf := func(hdr map[string]string) (map[string]any, string) {
		req, _ := http.NewRequest(http.MethodGet, reps[1].url+"/stats", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&s)
		return s, resp.Header.Get("X-Harness-Tenant")
	}
	tenants := map[string]string{}
	for _, key := range []string{alice, bob} {
		s, tenant := statsOf(map[string]string{"x-api-key": key})
		tenants[key] = tenant
		convs, _ := s["by_conversation"].(map[string]any)
		if len(convs) != 1 {
			t.Errorf("%s sees %d conversations, want its own 1", key, len(convs))
		}
		for id := range convs {
			if !strings.HasPrefix(id, tenant+"-") {
				t.Errorf("%s (tenant %s) sees %s", key, tenant, id)
			}
		}
	}
	if s, _ := statsOf(nil); s["requests"] != float64(0) || s["by_conversation"] != nil {
		t.Errorf("without a credential /stats shows %v", s)
	} else if s["replica"] != reps[1].name || reps[1].name == "" || reps[1].name == reps[0].name {
		t.Errorf("/stats names replica %v; the replicas' first lines named %q and %q", s["replica"], reps[0].name, reps[1].name)
	}
	reps[1].stop()
	st, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("stored %d conversations (%v), want 2", len(list), err)
	}
	for _, c := range list {
		if !strings.HasPrefix(c.ID, tenants[alice]+"-") {
			continue
		}
		conv, err := st.Load(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != rounds {
			t.Fatalf("stored %d turns, the first with %d rounds; want 1 turn of %d", len(conv.Turns), len(conv.Turns[0].Rounds), rounds)
		}
		for i, rd := range conv.Turns[0].Rounds {
			if rd.Index != i+1 || len(rd.Results) != 1 || rd.Results[0].CallID != fmt.Sprintf("call_%d", i) {
				t.Errorf("stored round %d: index %d, %d results", i+1, rd.Index, len(rd.Results))
			}
		}
		// Each round's request (its system prompt), though the replica
		// that stored the round is not the one that served it.
		stdout, stderr, code := inproc(t, "log", "show", c.ID, "--db", dsn, "--json")
		var shown struct {
			Requests []struct {
				Round       int  `json:"round"`
				Recorded    bool `json:"recorded"`
				SystemBytes int  `json:"system_bytes"`
			} `json:"requests"`
		}
		if err := json.Unmarshal([]byte(stdout), &shown); code != 0 || err != nil || len(shown.Requests) < rounds {
			t.Fatalf("log show %s: exit %d, %v, %d requests:\n%s", c.ID, code, err, len(shown.Requests), stderr)
		}
		for _, q := range shown.Requests {
			if !q.Recorded || q.SystemBytes != len("you are a coding agent") {
				t.Errorf("log show: round %d: recorded %v, %d bytes of system prompt; want the request's", q.Round, q.Recorded, q.SystemBytes)
			}
		}
	}
	stdout, stderr, code := inproc(t, "log", "list", "--db", dsn, "--tenant", tenants[bob])
	if code != 0 || strings.Contains(stdout, tenants[alice]) || !strings.Contains(stdout, tenants[bob]) {
		t.Errorf("log list --tenant %s: exit %d:\n%s%s", tenants[bob], code, stdout, stderr)
	}
}

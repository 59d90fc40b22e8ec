package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/store/sqlite"
)

// TestLogShowProxiedEvidence: "log show" of a conversation the proxy
// recorded gives each request's evidence, the characters of tool-result
// text it sent upstream (it printed 0 for every request).
func TestLogShowProxiedEvidence(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "harness.db")
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	up := wiretest.New(t)
	px, err := proxy.New(&proxy.Options{Upstream: up.URL, Store: st, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(px)
	big := strings.Repeat("0123456789 abcdefghijklmnopqrstuvwxyz ÀÉÎ\n", 100)[:4500]
	small := strings.Repeat("b", 100)
	use := func(id string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"cat ` + id + `"}}]}`
	}
	result := func(id, text string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + mustJSONString(text) + `}]}`
	}
	first := `{"role":"user","content":[{"type":"text","text":"read both"}]}`
	for _, ex := range []struct {
		msgs  []string
		reply wiretest.Reply
	}{
		{[]string{first}, wiretest.AnthropicStream("m", "", []wiretest.Call{{ID: "c1", Name: "Bash", Args: `{"command":"cat c1"}`}}, wiretest.Usage{Input: 10, Output: 1})},
		{[]string{first, use("c1"), result("c1", big)}, wiretest.AnthropicStream("m", "", []wiretest.Call{{ID: "c2", Name: "Bash", Args: `{"command":"cat c2"}`}}, wiretest.Usage{Input: 10, Output: 1})},
		{[]string{first, use("c1"), result("c1", big), use("c2"), result("c2", small)}, wiretest.AnthropicStream("m", "done", nil, wiretest.Usage{Input: 10, Output: 1})},
	} {
		up.Enqueue(ex.reply)
		body := `{"model":"m","max_tokens":64,"stream":true,"system":"S","tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[` + strings.Join(ex.msgs, ",") + `]}`
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		// Read to the end: a client that hangs up early cuts the answer.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	srv.Close()
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := st.List(ctx)
	st.Close()
	if err != nil || len(list) != 1 {
		t.Fatalf("%d conversations (err %v), want 1", len(list), err)
	}
	stdout, stderr, code := inproc(t, "log", "show", list[0].ID, "--db", db)
	if want := "evidence chars per request: r1 0, r2 4,200, r3 4,300"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("log show: exit %d, want %q in:\n%s%s", code, want, stdout, stderr)
	}
}

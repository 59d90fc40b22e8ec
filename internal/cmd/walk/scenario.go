package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/coverage"
	"strings"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/replay"
)

// The scenarios the walk measures, run by a copy of this command built
// with coverage (see measureWalk): the counters are cleared just before
// the path and written just after, so the profile holds the path alone,
// not the set-up around it.

// measure runs path with the coverage counters cleared before and
// written to dir after.
func measure(dir string, path func() error) error {
	if err := coverage.ClearCounters(); err != nil {
		return err
	}
	if err := path(); err != nil {
		return err
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	return coverage.WriteCountersDir(dir)
}

// walkCalls are the calls of the walk's conversation, each answering the
// request before it: a listing of about 4 KB, then a file.
var walkCalls = []struct{ id, args, result string }{
	{"c1", `{"command":"ls"}`, strings.Repeat("a-file.go\\n", 400)},
	{"c2", `{"command":"cat a-file.go"}`, "package main\\n"},
}

// anthropicBody is a Claude Code-like request: a prompt, then the first
// n calls of walkCalls with their results.
func anthropicBody(n int) []byte {
	msgs := []string{`{"role":"user","content":[{"type":"text","text":"list the files"}]}`}
	for _, c := range walkCalls[:n] {
		msgs = append(msgs,
			`{"role":"assistant","content":[{"type":"tool_use","id":"`+c.id+`","name":"Bash","input":`+c.args+`}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+c.id+`","content":"`+c.result+`"}]}`)
	}
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,` +
		`"system":[{"type":"text","text":"You are a test agent."}],` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}],` +
		`"metadata":{"user_id":"{\"session_id\":\"walk\"}"},"messages":[` + strings.Join(msgs, ",") + `]}`)
}

// walkProxy is one proxied Anthropic request, the second of its
// conversation (the first warms the proxy and decides the first result):
// from the handler to the upstream, and the streamed answer back to the
// client, until the proxy has flushed what it keeps.
func walkProxy(dir string) error {
	// Each answer calls the tool whose result the next request carries.
	var answers [][]byte
	for _, c := range append(walkCalls[1:], walkCalls[0]) {
		var sse bytes.Buffer
		for _, ev := range wiretest.AnthropicStream("claude-sonnet-4-5", "", []wiretest.Call{{ID: c.id, Name: "Bash", Args: c.args}}, wiretest.Usage{Input: 10, Output: 1}).Events {
			sse.WriteString(ev.Encode())
		}
		answers = append(answers, sse.Bytes())
	}
	sent := 0
	client := &http.Client{Transport: roundTrip(func(req *http.Request) (*http.Response, error) {
		req.Body.Close()
		sent++
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(answers[sent-1]))}, nil
	})}
	ws, err := os.MkdirTemp("", "walk-workspace")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	px, err := proxy.New(&proxy.Options{Upstream: "http://127.0.0.1:1", Workspace: ws, Client: client})
	if err != nil {
		return err
	}
	defer px.Close()
	send := func(n int) error {
		w := httptest.NewRecorder()
		px.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(anthropicBody(n))))
		if w.Code != 200 {
			return fmt.Errorf("status %d: %s", w.Code, w.Body.String())
		}
		return px.Flush(context.Background())
	}
	if err := send(1); err != nil {
		return err
	}
	return measure(dir, func() error { return send(2) })
}

// walkImport is one import through replay.ParseAll: a Claude Code
// session the importers' tests use (root is the module's directory).
func walkImport(dir, root string) error {
	name := filepath.Join(root, "replay", "testdata", "claude-code", "155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	return measure(dir, func() error {
		_, err := replay.ParseAll(name, data)
		return err
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProxyLogsUnreachableUpstream: with the upstream down, "harness
// proxy" answers each request with a 502 and says so on standard error,
// one line per request naming what failed, so a user watching the proxy
// sees why the client retries, for a model call and for a request it
// passes through alike.
func TestProxyLogsUnreachableUpstream(t *testing.T) {
	up := freeLoopback(t)
	stderr := &stderrLines{addr: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan int, 1)
	go func() {
		stopped <- runMain(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--upstream", "http://" + up,
			"--db", filepath.Join(t.TempDir(), "h.db"), "--workspace", t.TempDir()}, &env{stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(string) string { return "" }})
	}()
	var addr string
	select {
	case addr = <-stderr.addr:
	case code := <-stopped:
		t.Fatalf("harness proxy exited with %d: %s", code, stderr.String())
	case <-time.After(5 * time.Minute): // only catches a hang
		t.Fatal("harness proxy did not start")
	}
	for _, tc := range []struct{ method, path, body, want string }{
		{http.MethodPost, "/v1/messages", `{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "harness proxy: anthropic px-"},
		{http.MethodGet, "/v1/models", "", "harness proxy: GET /v1/models: "},
	} {
		req, err := http.NewRequestWithContext(context.Background(), tc.method, addr+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", "sk-test-unreachable")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%s %s: status %d, want 502", tc.method, tc.path, resp.StatusCode)
		}
		var line string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, tc.want) {
				line = l
			}
		}
		if !strings.Contains(line, "the upstream did not answer, the client got a 502") || !strings.Contains(line, up) {
			t.Errorf("%s %s: no log line starting %q that names the failure and %s:\n%s", tc.method, tc.path, tc.want, up, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "sk-test-unreachable") {
		t.Errorf("the log quotes the key:\n%s", stderr.String())
	}
	cancel()
	if code := <-stopped; code != 0 {
		t.Errorf("harness proxy exited with %d: %s", code, stderr.String())
	}
}

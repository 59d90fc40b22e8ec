package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProxyRedactsKeys: Gemini CLI sends its key as ?key= in the URL;
// with the upstream unreachable, the 502 the proxy answers and every
// line it logs quote the upstream's *url.Error, which quotes the URL.
// Neither the body, nor the log, nor the store may hold the key (nor the
// password of an upstream URL).
func TestProxyRedactsKeys(t *testing.T) {
	const key, pass = "AIzaKEYSECRET0123", "UPSTREAMPASS77"
	db := filepath.Join(t.TempDir(), "harness.db")
	stderr := &stderrLines{addr: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan int, 1)
	go func() {
		stopped <- runMain(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--upstream", "http://user:" + pass + "@" + freeLoopback(t) + "/",
			"--db", db, "--workspace", t.TempDir()}, &env{stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(string) string { return "" }})
	}()
	var addr string
	select {
	case addr = <-stderr.addr:
	case code := <-stopped:
		t.Fatalf("harness proxy exited with %d: %s", code, stderr.String())
	case <-time.After(5 * time.Minute): // only catches a hang
		t.Fatal("harness proxy did not start")
	}
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"path":"a"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"x"}}}]}]}`
	for _, path := range []string{"/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=" + key, "/v1beta/models?key=" + key, "/v1beta/models/gemini-test:generateContent?key=" + key} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-goog-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%s: status %d, want 502: %s", path, resp.StatusCode, got)
		}
		if !strings.Contains(string(got), "key=REDACTED") {
			t.Errorf("%s: the 502 does not quote the redacted URL (is the test still probing the echo?): %s", path, got)
		}
		for _, s := range []string{key, pass} {
			if strings.Contains(string(got), s) {
				t.Errorf("%s: the 502 body quotes a credential: %s", path, got)
			}
		}
	}
	cancel()
	if code := <-stopped; code != 0 {
		t.Errorf("harness proxy exited with %d: %s", code, stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, "REDACTED") {
		t.Errorf("the log redacted nothing (is the test still probing the echo?):\n%s", log)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{key, pass} {
		if strings.Contains(log, s) {
			t.Errorf("the proxy's log quotes a credential:\n%s", log)
		}
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the store holds a credential")
		}
	}
}

// TestCLIErrorRedacted: an error the CLI prints quotes no credential of
// the URL it names.
func TestCLIErrorRedacted(t *testing.T) {
	for _, up := range []string{"ftp://u:PASSSECRET@h/?key=KEYSECRET", "http://u:PASSSECRET@h/%zz?key=KEYSECRET"} {
		var stderr bytes.Buffer
		code := runMain(context.Background(), []string{"proxy", "--listen", "127.0.0.1:0", "--upstream", up, "--db", filepath.Join(t.TempDir(), "h.db")},
			&env{stdout: &bytes.Buffer{}, stderr: &stderr, getenv: func(string) string { return "" }})
		if code == 0 {
			t.Errorf("--upstream %s: exit 0", up)
		}
		if s := stderr.String(); strings.Contains(s, "SECRET") || !strings.Contains(s, "REDACTED") {
			t.Errorf("--upstream %s: %s", up, s)
		}
	}
}

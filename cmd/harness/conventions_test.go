package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// chatReply is a non-streamed chat completion with content and, when
// calls is set, one list_dir call.
func chatReply(content string, calls bool) string {
	msg := `{"role":"assistant","content":` + quoteJSON(content)
	finish := "stop"
	if calls {
		msg += `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]`
		finish = "tool_calls"
	}
	return `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-loop","choices":[{"index":0,"finish_reason":"` + finish +
		`","message":` + msg + `}}],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}}`
}

func quoteJSON(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// A round's text before its tool calls is not the answer: stdout carries
// the answer alone; --stream asks for every round's text as it arrives.
func TestRunStdoutIsTheAnswerAlone(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			io.WriteString(w, chatReply("Let me look around first.", true))
			return
		}
		io.WriteString(w, chatReply("The workspace holds one file.", false))
	}))
	defer srv.Close()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o600)
	stdout, stderr, code := runWithEnv(t, map[string]string{"OPENAI_API_KEY": "sk-loop"},
		"run", "--model", "openai:gpt-loop", "--base-url", srv.URL+"/v1", "--workspace", ws, "--no-store", "What is here?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "The workspace holds one file.\n" {
		t.Fatalf("stdout %q, want the answer alone", stdout)
	}
}

// The hint a run prints names the store it used, so it works pasted.
func TestRunHintNamesTheWorkspace(t *testing.T) {
	script := writeScript(t, `{"steps":[{"text":"done"}]}`)
	ws := t.TempDir()
	_, stderr, code := cli(t, "", "run", "--model", "scripted:"+script, "--workspace", ws, "go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i := strings.Index(stderr, "harness log show ")
	if i < 0 || !strings.Contains(stderr[i:], " --workspace "+ws+")") {
		t.Fatalf("hint lacks --workspace %s: %s", ws, stderr)
	}
	id := strings.Fields(stderr[i+len("harness log show "):])[0]
	stdout, stderr, code := cli(t, "", "log", "show", id, "--workspace", ws)
	if code != 0 || !strings.Contains(stdout, id) {
		t.Fatalf("the hint's command failed: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestStoreArgs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ws, db, want string }{
		{wd, "", ""},
		{"/tmp/w", "", " --workspace /tmp/w"},
		{"/tmp/my work", "", " --workspace '/tmp/my work'"},
		{wd, "/tmp/x.db", " --db /tmp/x.db"},
		{"/tmp/it's", "", ` --workspace '/tmp/it'\''s'`},
	} {
		if got := storeArgs(tc.ws, tc.db); got != tc.want {
			t.Errorf("storeArgs(%q, %q) = %q, want %q", tc.ws, tc.db, got, tc.want)
		}
	}
}

// A retried request says so on stderr; a host that does not resolve is
// not retried at all.
func TestRunSaysItRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded, try again"}}`)
			return
		}
		io.WriteString(w, chatReply("fine", false))
	}))
	defer srv.Close()
	stdout, stderr, code := runWithEnv(t, map[string]string{"OPENAI_API_KEY": "sk-loop"},
		"run", "--model", "openai:gpt-loop", "--base-url", srv.URL+"/v1", "--workspace", t.TempDir(), "--no-store", "hi")
	if code != 0 || stdout != "fine\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "retrying (1/") || !strings.Contains(stderr, "overloaded, try again") {
		t.Fatalf("stderr does not say it retried: %s", stderr)
	}

	// .invalid never resolves (RFC 6761), where a resolver answers at all.
	var dnsErr *net.DNSError
	if _, err := net.LookupHost("unresolvable.invalid"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("this machine's resolver does not answer NXDOMAIN for .invalid: %v", err)
	}
	_, stderr, code = runWithEnv(t, map[string]string{"OPENAI_API_KEY": "sk-loop"},
		"run", "--model", "openai:gpt-loop", "--base-url", "http://unresolvable.invalid/v1", "--workspace", t.TempDir(), "--no-store", "hi")
	if code != 1 || strings.Contains(stderr, "retrying") || !strings.Contains(stderr, "unresolvable.invalid") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

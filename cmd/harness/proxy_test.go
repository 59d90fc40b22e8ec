package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/policy"
)

// TestProxyFlags: the proxy refuses to start with an upstream that is not
// http(s) or names no scheme, or on a non-loopback address unless asked.
func TestProxyFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "0.0.0.0:0"}, 2, "not a loopback address"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--listen", "nonsense"}, 2, "--listen"},
		{[]string{"proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "h.db")}, 2, "want an http or https URL"},
		// A URL without its scheme: one prefix, and the fix spelled out.
		{[]string{"proxy", "--upstream", "127.0.0.1:9102", "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "h.db")}, 2,
			`harness proxy: --upstream "127.0.0.1:9102" has no scheme: write http://127.0.0.1:9102`},
		{[]string{"proxy", "--upstream", "anthropic=http://127.0.0.1:1,mistral=http://x", "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "h.db")}, 2,
			`"mistral" is not anthropic, openai, gemini, chatgpt or codeassist`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--clear-when-idle", "soon"}, 2, `want auto, off or a duration`},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--turn-budget", "-1"}, 2, "take sizes ≥ 0"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--run-ceiling", "-1"}, 2, "take sizes ≥ 0"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1", "--clear-when-idle", "-5m"}, 2, `--clear-when-idle -5m0s: want auto, off or a positive duration`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runMain(context.Background(), tc.args, &env{stdout: &out, stderr: &errb})
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", code, tc.code, errb.String(), tc.want)
			}
		})
	}
}

func TestProxySpillRoot(t *testing.T) {
	tests := []struct{ dir, workspace, want string }{
		{"", "/w", "/w"},
		{"/data/x", "/w", "/data/x"},
		{"/data/x/.harness/spill", "/w", "/data/x"},
		{"/data/x/.harness/spill/", "/w", "/data/x"},
	}
	for _, tc := range tests {
		if got := proxySpillRoot(tc.dir, tc.workspace); got != tc.want {
			t.Errorf("proxySpillRoot(%q, %q) = %q, want %q", tc.dir, tc.workspace, got, tc.want)
		}
	}
}

// TestProxyStackFlags: the proxy's switches for its stack change what it
// forwards. One Chat Completions request carries four rounds: a test run's
// 6,000-character log and three 10,000-character file reads. By default
// the run ceiling cuts the log to its preview and the three reads share
// what the 24,000-character turn budget leaves; --turn-budget 0 forwards
// the reads whole, a larger budget too, a smaller one cuts them more, and
// --run-ceiling 0 forwards the log whole.
func TestProxyStackFlags(t *testing.T) {
	var runLog, body strings.Builder
	for i := 0; body.Len() < 6_000; i++ {
		fmt.Fprintf(&body, "test_case_%04d ... ok (%d ms)\n", i, i%97)
	}
	runLog.WriteString(body.String()[:6_000])
	read := func(name string) string {
		var b strings.Builder
		for i := 0; b.Len() < 10_000; i++ {
			fmt.Fprintf(&b, "%s line %05d: some configuration value that matters to nobody\n", name, i)
		}
		return b.String()[:10_000]
	}
	calls := []shellCall{
		{"call_run", `{"command":"python -m pytest tests"}`, runLog.String()},
		{"call_a", `{"command":"cat a.conf"}`, read("a.conf")},
		{"call_b", `{"command":"cat b.conf"}`, read("b.conf")},
		{"call_c", `{"command":"cat c.conf"}`, read("c.conf")},
	}
	req := shellChatRequest(t, "Why do the tests fail?", calls...)
	// forwarded sends the request through a proxy started with flags and
	// returns the characters of each result the upstream received.
	forwarded := func(t *testing.T, flags ...string) []int {
		r := startE2E(t, func(wiretest.Request) wiretest.Reply {
			return wiretest.ChatStream("gpt-test", "They fail in c.conf.", nil, wiretest.Usage{Input: 10, Output: 5})
		}, flags...)
		resp, err := http.Post(r.addr+"/v1/chat/completions", "application/json", bytes.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		ups := r.up.Requests()
		if len(ups) != 1 {
			t.Fatalf("the upstream got %d requests", len(ups))
		}
		sizes := toolResultSizes(t, ups[0].Body)
		if len(sizes) != len(calls) {
			t.Fatalf("%d results forwarded, want %d", len(sizes), len(calls))
		}
		return sizes
	}
	sum := func(xs []int) int {
		n := 0
		for _, x := range xs {
			n += x
		}
		return n
	}
	def := forwarded(t)
	if def[0] >= 3_072 { // the run ceiling's 2 KiB preview and its marker
		t.Errorf("default: the test log shows %d chars, want the run ceiling's preview", def[0])
	}
	for i, n := range def[1:] {
		if n >= 10_000 {
			t.Errorf("default: read %d shows %d chars, want cut to its share of the turn budget", i+1, n)
		}
	}
	if total := sum(def); total > policy.DefaultTurnChars {
		t.Errorf("default: %d chars of evidence, over the %d budget", total, policy.DefaultTurnChars)
	}
	// The log's preview names its spill file under the test's own folder,
	// so its length moves by a few characters from one proxy to the next.
	cut := func(n int) bool { return n < 3_072 }
	whole := func(size int) func(int) bool { return func(n int) bool { return n == size } }
	for _, tc := range []struct {
		flags []string
		log   func(int) bool
		reads func(int) bool
		want  string
	}{
		{[]string{"--turn-budget", "0"}, cut, whole(10_000), "reads whole"},
		{[]string{"--turn-budget", "40000"}, cut, whole(10_000), "reads whole"},
		{[]string{"--turn-budget", "12000"}, cut, func(n int) bool { return n < def[1] }, "reads cut below the default's share"},
		{[]string{"--run-ceiling", "0", "--turn-budget", "0"}, whole(6_000), whole(10_000), "everything whole"},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			got := forwarded(t, tc.flags...)
			ok := tc.log(got[0])
			for _, n := range got[1:] {
				ok = ok && tc.reads(n)
			}
			if !ok {
				t.Errorf("forwarded %v (default %v), want %s", got, def, tc.want)
			}
		})
	}
}

// TestProxyPortInUse: a --listen address another process holds (often a
// harness proxy already running) gets one line saying so and what to do.
func TestProxyPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	var out, errb bytes.Buffer
	code := runMain(context.Background(), []string{"proxy", "--listen", addr, "--upstream", "http://127.0.0.1:1", "--db", filepath.Join(t.TempDir(), "h.db")},
		&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	want := "harness proxy: " + addr + " is in use, perhaps by another harness proxy (HARNESS_PROXY=http://" + addr + " harness claude … reuses one): " +
		"pass --listen with another port, or 127.0.0.1:0 for any free one: "
	if code != 1 || !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line starting %q", code, errb.String(), want)
	}
}

// TestProxyCeilingByCall: at the default --max-result-bytes the proxy's
// ceiling is the library's, by the call, so a search's 12,000-character
// output reaches the upstream cut to its preview; a --max-result-bytes of
// 30000 forwards it whole, as does a larger file print at the default.
func TestProxyCeilingByCall(t *testing.T) {
	out := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "src/pkg/file_%04d.go:12: func something() { return nil }\n", i)
		}
		return b.String()[:n]
	}
	req := shellChatRequest(t, "Where is something?",
		shellCall{"call_rg", `{"command":"rg -n something src"}`, out(12_000)},
		shellCall{"call_cat", `{"command":"cat src/pkg/file.go"}`, out(20_000)})
	for _, tc := range []struct {
		flags  []string
		search func(int) bool
		want   string
	}{
		{nil, func(n int) bool { return n < 8_192 }, "the search cut to its preview"},
		{[]string{"--max-result-bytes", "30000"}, func(n int) bool { return n == 12_000 }, "the search whole"},
	} {
		t.Run(fmt.Sprint(tc.flags), func(t *testing.T) {
			r := startE2E(t, func(wiretest.Request) wiretest.Reply {
				return wiretest.ChatStream("gpt-test", "In file.go.", nil, wiretest.Usage{Input: 10, Output: 5})
			}, append([]string{"--turn-budget", "0"}, tc.flags...)...)
			resp, err := http.Post(r.addr+"/v1/chat/completions", "application/json", bytes.NewReader(req))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ups := r.up.Requests()
			if resp.StatusCode != http.StatusOK || len(ups) != 1 {
				t.Fatalf("status %d, %d upstream requests", resp.StatusCode, len(ups))
			}
			if sizes := toolResultSizes(t, ups[0].Body); len(sizes) != 2 || !tc.search(sizes[0]) || sizes[1] != 20_000 {
				t.Errorf("forwarded %v, want %s and the file print whole", sizes, tc.want)
			}
		})
	}
}

// toolResultSizes is the characters of each tool message of a Chat
// Completions request body.
func toolResultSizes(t *testing.T, body []byte) []int {
	t.Helper()
	var got struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, m := range got.Messages {
		if m.Role == "tool" {
			sizes = append(sizes, len([]rune(m.Content)))
		}
	}
	return sizes
}

// shellCall is one call of a shell tool and its result.
type shellCall struct{ id, args, result string }

// shellChatRequest is a streamed Chat Completions request whose history
// holds calls, one round each, after the prompt.
func shellChatRequest(t *testing.T, prompt string, calls ...shellCall) []byte {
	t.Helper()
	msgs := []any{map[string]any{"role": "system", "content": "You are a test agent."}, map[string]any{"role": "user", "content": prompt}}
	for _, c := range calls {
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": "shell", "arguments": c.args}}}},
			map[string]any{"role": "tool", "tool_call_id": c.id, "content": c.result})
	}
	req, err := json.Marshal(map[string]any{"model": "gpt-test", "stream": true, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

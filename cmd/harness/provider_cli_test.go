package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// loopback is a provider endpoint on 127.0.0.1 speaking one wire format:
// it answers every request with reply (streamed or not, as asked) and
// records what it received.
type loopback struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	auth   []http.Header
	bodies [][]byte
}

func newLoopback(t *testing.T, reply func(stream bool) (contentType, body string)) *loopback {
	l := &loopback{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.Path)
		l.auth = append(l.auth, r.Header.Clone())
		l.bodies = append(l.bodies, body)
		l.mu.Unlock()
		var req struct{ Stream bool }
		json.Unmarshal(body, &req)
		ct, out := reply(req.Stream)
		w.Header().Set("Content-Type", ct)
		io.WriteString(w, out)
	}))
	t.Cleanup(l.Close)
	return l
}

func runWithEnv(t *testing.T, envVars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return envVars[k] }}
	code = runMain(context.Background(), args, e)
	return out.String(), errb.String(), code
}

func openAIReply(stream bool) (string, string) {
	if !stream {
		return "application/json", `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-loop",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello from the loopback."}}],
			"usage":{"prompt_tokens":1500,"completion_tokens":5,"total_tokens":1505,"prompt_tokens_details":{"cached_tokens":1280}}}`
	}
	chunk := func(choices, usage string) string {
		s := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-loop","choices":` + choices
		if usage != "" {
			s += `,"usage":` + usage
		}
		return s + "}\n\n"
	}
	return "text/event-stream", chunk(`[{"index":0,"delta":{"role":"assistant","content":"Hello from "},"finish_reason":null}]`, "") +
		chunk(`[{"index":0,"delta":{"content":"the loopback."},"finish_reason":null}]`, "") +
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`, "") +
		chunk(`[]`, `{"prompt_tokens":1500,"completion_tokens":5,"total_tokens":1505,"prompt_tokens_details":{"cached_tokens":1280}}`) +
		"data: [DONE]\n\n"
}

func TestRunOpenAIAgainstLoopback(t *testing.T) {
	for _, stream := range []string{"--stream=true", "--stream=false"} {
		t.Run(stream, func(t *testing.T) {
			srv := newLoopback(t, openAIReply)
			stdout, stderr, code := runWithEnv(t, map[string]string{"OPENAI_API_KEY": "sk-loop"},
				"run", "--model", "openai:gpt-loop", "--base-url", srv.URL+"/v1", "--workspace", t.TempDir(), "--no-store", stream, "Say hello.")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.TrimSpace(stdout) != "Hello from the loopback." {
				t.Errorf("stdout %q", stdout)
			}
			if !strings.Contains(stderr, "tokens in 1500 (cached 1280), out 5") {
				t.Errorf("stderr %q has not the provider's usage", stderr)
			}
			if len(srv.paths) != 1 || srv.paths[0] != "/v1/chat/completions" || srv.auth[0].Get("Authorization") != "Bearer sk-loop" {
				t.Fatalf("requests %v %v", srv.paths, srv.auth)
			}
			var body struct {
				Model    string `json:"model"`
				Stream   bool   `json:"stream"`
				Messages []struct {
					Role    string `json:"role"`
					Content any    `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(srv.bodies[0], &body); err != nil {
				t.Fatal(err)
			}
			if body.Model != "gpt-loop" || body.Stream != (stream == "--stream=true") || len(body.Messages) != 2 ||
				body.Messages[0].Role != "system" || body.Messages[1].Content != "Say hello." {
				t.Errorf("request body %s", srv.bodies[0])
			}
		})
	}
}

func TestRunAnthropicAgainstLoopback(t *testing.T) {
	srv := newLoopback(t, func(stream bool) (string, string) {
		ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
		return "text/event-stream", ev("message_start", `{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"claude-loop","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":1480,"output_tokens":1}}}`) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from the loopback."}}`) +
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`) +
			ev("message_stop", `{"type":"message_stop"}`)
	})
	stdout, stderr, code := runWithEnv(t, map[string]string{"ANTHROPIC_AUTH_TOKEN": "tok-loop"},
		"run", "--model", "anthropic:claude-loop", "--base-url", srv.URL, "--workspace", t.TempDir(), "--no-store", "--stream", "Say hello.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.TrimSpace(stdout) != "Hello from the loopback." || !strings.Contains(stderr, "tokens in 1500 (cached 1480), out 5") {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if srv.paths[0] != "/v1/messages" || srv.auth[0].Get("Authorization") != "Bearer tok-loop" {
		t.Errorf("%v %v", srv.paths, srv.auth)
	}
}

func TestRunProviderMissingKey(t *testing.T) {
	for model, variable := range map[string]string{"openai:gpt-5-mini": "OPENAI_API_KEY", "anthropic:claude-sonnet-4-5": "ANTHROPIC_API_KEY"} {
		_, stderr, code := runWithEnv(t, nil, "run", "--model", model, "--workspace", t.TempDir(), "--no-store", "hi")
		if code != 1 || !strings.Contains(stderr, variable) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and a message naming %s", model, code, stderr, variable)
		}
	}
}

func TestRunProviderErrorIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer srv.Close()
	_, stderr, code := runWithEnv(t, map[string]string{"OPENAI_API_KEY": "bad"},
		"run", "--model", "openai:gpt-loop", "--base-url", srv.URL+"/v1", "--workspace", t.TempDir(), "--no-store", "hi")
	if code != 1 || !strings.Contains(stderr, "401 Unauthorized: invalid_request_error: invalid_api_key: Incorrect API key provided") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

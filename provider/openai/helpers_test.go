package openai

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
)

// newTestModel returns a model talking to srv with tiny backoff.
func newTestModel(t *testing.T, srv *wiretest.Server, mod func(*Options)) *Model {
	t.Helper()
	o := &Options{
		Model:          "gpt-test",
		BaseURL:        srv.URL + "/v1",
		APIKey:         "sk-test",
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  2 * time.Millisecond,
		Getenv:         func(string) string { return "" },
	}
	if mod != nil {
		mod(o)
	}
	m, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// indent pretty-prints JSON for comparisons and golden files.
func indent(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("invalid JSON %q: %v", raw, err)
	}
	return b.String()
}

// sameJSON reports whether two JSON texts are equal byte for byte after
// indentation (key order included).
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	if g, w := indent(t, got), indent(t, []byte(want)); g != w {
		t.Errorf("request body:\n%s\nwant:\n%s", g, w)
	}
}

// completion is a Chat Completions reply body.
func completion(content string, toolCalls string, finish string, usage string) string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if content != "" {
		msg["content"] = content
	}
	if toolCalls != "" {
		msg["tool_calls"] = json.RawMessage(toolCalls)
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "gpt-test-2026",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   json.RawMessage(usage),
	})
	return string(b)
}

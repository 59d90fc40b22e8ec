package anthropic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

var png = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0}

func TestGenerateRequestBody(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(okBody))
	m := newTestModel(t, srv, nil)
	req := &harness.Request{
		System: "be brief",
		Messages: []harness.Message{
			{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart("be brief")}},
			{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("look")}},
			{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("reading both")}, ToolCalls: []harness.ToolCall{
				{ID: "toolu_a", Name: "read", Args: json.RawMessage(`{"path": "a.txt"}`)},
				{ID: "toolu_b", Name: "read", Args: json.RawMessage(`{"path": "b.txt"`)},
			}},
			{Role: harness.RoleTool, ToolCallID: "toolu_a", ToolName: "read", Parts: []harness.Part{
				harness.TextPart("alpha"), harness.ImagePart("image/png", png), harness.JSONPart(json.RawMessage(`{"lines":1}`)),
			}},
			{Role: harness.RoleTool, ToolCallID: "toolu_b", ToolName: "read", IsError: true, Parts: []harness.Part{harness.TextPart("invalid arguments")}},
		},
		Tools: []harness.ToolSpec{
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "shot"},
		},
	}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Errorf("%s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("X-Api-Key"); got != "sk-ant-test" {
		t.Errorf("x-api-key = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none with an API key", got)
	}
	if r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
	sameJSON(t, r.Body, `{
  "max_tokens": 8192,
  "messages": [
    {"content": [{"text": "look", "cache_control": {"type": "ephemeral"}, "type": "text"}], "role": "user"},
    {"content": [
      {"text": "reading both", "type": "text"},
      {"id": "toolu_a", "input": {"path":"a.txt"}, "name": "read", "type": "tool_use"},
      {"id": "toolu_b", "input": {}, "name": "read", "type": "tool_use"}
    ], "role": "assistant"},
    {"content": [
      {"tool_use_id": "toolu_a", "content": [
        {"text": "alpha", "type": "text"},
        {"source": {"data": "iVBORw0KGgoAAAAA", "media_type": "image/png", "type": "base64"}, "type": "image"},
        {"text": "{\"lines\":1}", "type": "text"}
      ], "type": "tool_result"},
      {"tool_use_id": "toolu_b", "is_error": true, "cache_control": {"type": "ephemeral"}, "content": [{"text": "invalid arguments", "type": "text"}], "type": "tool_result"}
    ], "role": "user"}
  ],
  "model": "claude-test",
  "system": [{"text": "be brief", "cache_control": {"type": "ephemeral"}, "type": "text"}],
  "tools": [
    {"input_schema": {"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object", "additionalProperties": false}, "name": "read", "description": "Read a file."},
    {"input_schema": {"properties": {}, "type": "object"}, "name": "shot"}
  ]
}`)
}

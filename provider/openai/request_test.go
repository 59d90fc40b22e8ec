package openai

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
	srv.Enqueue(wiretest.JSON(completion("done", "", "stop", `{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}`)))
	m := newTestModel(t, srv, func(o *Options) { o.MaxTokens = 512 })
	req := &harness.Request{
		System: "be brief",
		Messages: []harness.Message{
			{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart("be brief")}},
			{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("look")}},
			{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("reading both")}, ToolCalls: []harness.ToolCall{
				{ID: "call_a", Name: "read", Args: json.RawMessage(`{"path":"a.txt"}`)},
				{ID: "call_b", Name: "read", Args: json.RawMessage(`{"path": "b.txt"`)},
			}},
			{Role: harness.RoleTool, ToolCallID: "call_a", ToolName: "read", Parts: []harness.Part{
				harness.TextPart("alpha"), harness.ImagePart("image/png", png), harness.JSONPart(json.RawMessage(`{"lines":1}`)),
			}},
			{Role: harness.RoleTool, ToolCallID: "call_b", ToolName: "read", IsError: true, Parts: []harness.Part{harness.TextPart("invalid arguments")}},
			{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "call_c", Name: "shot", Args: json.RawMessage(`{}`)}}},
			{Role: harness.RoleTool, ToolCallID: "call_c", ToolName: "shot", Parts: []harness.Part{harness.ImagePart("image/svg+xml", []byte("<svg/>"))}},
		},
		Tools: []harness.ToolSpec{
			{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "shot", InputSchema: nil},
		},
	}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "done" {
		t.Errorf("answer = %q", resp.Message.Text())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" {
		t.Errorf("%s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	sameJSON(t, r.Body, `{
  "messages": [
    {"content": "be brief", "role": "system"},
    {"content": "look", "role": "user"},
    {"content": "reading both", "tool_calls": [
      {"id": "call_a", "function": {"arguments": "{\"path\":\"a.txt\"}", "name": "read"}, "type": "function"},
      {"id": "call_b", "function": {"arguments": "{\"path\": \"b.txt\"", "name": "read"}, "type": "function"}
    ], "role": "assistant"},
    {"content": "alpha\n{\"lines\":1}", "tool_call_id": "call_a", "role": "tool"},
    {"content": "invalid arguments", "tool_call_id": "call_b", "role": "tool"},
    {"content": [
      {"text": "Image(s) returned by tool call call_a (read):", "type": "text"},
      {"image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAAA"}, "type": "image_url"}
    ], "role": "user"},
    {"tool_calls": [{"id": "call_c", "function": {"arguments": "{}", "name": "shot"}, "type": "function"}], "role": "assistant"},
    {"content": "[image of type \"image/svg+xml\" (6 bytes) not shown: the model accepts png, jpeg, webp and gif]", "tool_call_id": "call_c", "role": "tool"}
  ],
  "model": "gpt-test",
  "max_completion_tokens": 512,
  "tools": [
    {"function": {"name": "read", "description": "Read a file.", "parameters": {"properties": {"path": {"type": "string"}}, "required": ["path"], "type": "object"}}, "type": "function"},
    {"function": {"name": "shot", "parameters": {"properties": {}, "type": "object"}}, "type": "function"}
  ]
}`)
}

package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

func userRequest(text string) *harness.Request {
	return &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text)}}}}
}

func TestGenerateMapsParallelToolCallsAndUsage(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(completion("Reading both.", `[
		{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},
		{"id":"call_2","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]`, "tool_calls",
		`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`)))
	m := newTestModel(t, srv, nil)
	resp, err := m.Generate(context.Background(), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := &harness.Response{
		Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Reading both.")}, ToolCalls: []harness.ToolCall{
			{ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)},
			{ID: "call_2", Name: "read", Args: json.RawMessage(`{"path":`)},
		}},
		Usage:      harness.Usage{Input: 2006, Cached: 1920, Output: 300},
		StopReason: "tool_calls",
		Model:      "gpt-test-2026",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n%+v\nwant:\n%+v", resp, want)
	}
}

func TestGenerateRefusalIsText(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`))
	resp, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "I can't help with that." {
		t.Errorf("text = %q", resp.Message.Text())
	}
}

func TestGenerateNoChoices(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`))
	_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
	if err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("err = %v", err)
	}
	if srv.Pending() != 0 || len(srv.Requests()) != 1 {
		t.Errorf("an empty reply was retried")
	}
}

func TestRequestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		req  *harness.Request
		want string
	}{
		{"system from Request.System", nil,
			&harness.Request{System: "sys", Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hi")}}}},
			`{"messages":[{"content":"sys","role":"system"},{"content":"hi","role":"user"}],"model":"gpt-test"}`},
		{"request cap wins, legacy name", func(o *Options) { o.MaxTokens = 100; o.LegacyMaxTokens = true },
			&harness.Request{MaxOutputTokens: 7, Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hi")}}}},
			`{"messages":[{"content":"hi","role":"user"}],"model":"gpt-test","max_tokens":7}`},
		{"final call keeps tools, forbids calls", nil,
			&harness.Request{Final: true, Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hi")}}},
				Tools: []harness.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
			`{"messages":[{"content":"hi","role":"user"}],"model":"gpt-test","tool_choice":"none","tools":[{"function":{"name":"t","parameters":{"type":"object"}},"type":"function"}]}`},
		{"user image as content parts", nil,
			&harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("see"), harness.ImagePart("image/PNG", []byte{1, 2, 3})}}}},
			`{"messages":[{"content":[{"text":"see","type":"text"},{"image_url":{"url":"data:image/png;base64,AQID"},"type":"image_url"}],"role":"user"}],"model":"gpt-test"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.JSON(completion("ok", "", "stop", `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`)))
			if _, err := newTestModel(t, srv, tc.mod).Generate(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			sameJSON(t, srv.Requests()[0].Body, tc.want)
		})
	}
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	srv := wiretest.New(t)
	m := newTestModel(t, srv, nil)
	for _, req := range []*harness.Request{
		{Messages: []harness.Message{{Role: "narrator"}}},
		{Messages: []harness.Message{{Role: harness.RoleUser}}, Tools: []harness.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}},
	} {
		if _, err := m.Generate(context.Background(), req); err == nil {
			t.Errorf("no error for %+v", req)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

func TestGenerateMapsToolUseAndUsage(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(message(`[
		{"type":"text","text":"Reading both."},
		{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}},
		{"type":"tool_use","id":"toolu_2","name":"grep","input":{}}]`, "tool_use",
		`{"input_tokens":50,"cache_creation_input_tokens":1000,"cache_read_input_tokens":3000,"output_tokens":80}`)))
	resp, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := &harness.Response{
		Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Reading both.")}, ToolCalls: []harness.ToolCall{
			{ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)},
			{ID: "toolu_2", Name: "grep", Args: json.RawMessage(`{}`)},
		}},
		// Input counts every prompt token: 50 uncached + 3000 read + 1000 written.
		Usage:      harness.Usage{Input: 4050, Cached: 3000, CacheWrite: 1000, Output: 80},
		StopReason: "tool_use",
		Model:      "claude-test-2026",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n%+v\nwant:\n%+v", resp, want)
	}
	if got := resp.Usage.Effective(); got != 50+1000+0.1*3000+4*80 {
		t.Errorf("effective = %v", got)
	}
}

func TestAuthHeaderForms(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         map[string]string
		opts        func(*Options)
		key, bearer string
	}{
		{"api key from env", map[string]string{envAPIKey: "sk-ant-env"}, nil, "sk-ant-env", ""},
		{"auth token from env", map[string]string{envAuthToken: "oauth-tok"}, nil, "", "Bearer oauth-tok"},
		{"key wins over token", map[string]string{envAPIKey: "k", envAuthToken: "t"}, nil, "k", ""},
		{"token option", nil, func(o *Options) { o.AuthToken = "opt-tok" }, "", "Bearer opt-tok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.JSON(okBody))
			o := &Options{Model: "claude-test", BaseURL: srv.URL, Getenv: func(k string) string { return tc.env[k] }}
			if tc.opts != nil {
				tc.opts(o)
			}
			m, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Generate(context.Background(), userRequest("x")); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0].Header
			if h.Get("X-Api-Key") != tc.key || h.Get("Authorization") != tc.bearer {
				t.Errorf("x-api-key %q, authorization %q; want %q, %q", h.Get("X-Api-Key"), h.Get("Authorization"), tc.key, tc.bearer)
			}
		})
	}
}

func TestNewMissingKeyNamesTheVariable(t *testing.T) {
	_, err := New(&Options{Model: "claude-test", Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	for _, o := range []*Options{nil, {APIKey: "k"}, {Model: "m", APIKey: "k", BaseURL: "localhost:1"}, {Model: "m", APIKey: "k", MaxTokens: -5}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestBaseURLFromEnvironment(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(okBody))
	env := map[string]string{envBaseURL: srv.URL + "/proxy", envAPIKey: "k"}
	m, err := New(&Options{Model: "claude-test", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	if p := srv.Requests()[0].Path; p != "/proxy/v1/messages" {
		t.Errorf("path = %q", p)
	}
	if m.modelName() != "claude-test" {
		t.Errorf("Name = %q", m.modelName())
	}
}

func TestRequestShapes(t *testing.T) {
	toolHistory := []harness.Message{
		{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("q")}},
		{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "t1", Name: "read", Args: json.RawMessage(`[1]`)}}},
		{Role: harness.RoleTool, ToolCallID: "t1", ToolName: "read", Parts: []harness.Part{harness.TextPart("")}},
	}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		req  *harness.Request
		want string
	}{
		{"system from Request.System, request cap, no cache", func(o *Options) { o.NoCache = true },
			&harness.Request{System: "sys", MaxOutputTokens: 99, Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hi")}}}},
			`{"max_tokens":99,"messages":[{"content":[{"text":"hi","type":"text"}],"role":"user"}],"model":"claude-test","system":[{"text":"sys","type":"text"}]}`},
		{"synthesis with tools withheld declares the used ones", func(o *Options) { o.NoCache = true },
			&harness.Request{Final: true, Messages: toolHistory},
			`{"max_tokens":8192,"messages":[{"content":[{"text":"q","type":"text"}],"role":"user"},{"content":[{"id":"t1","input":{},"name":"read","type":"tool_use"}],"role":"assistant"},{"content":[{"tool_use_id":"t1","type":"tool_result"}],"role":"user"}],"model":"claude-test","tool_choice":{"type":"none"},"tools":[{"input_schema":{"properties":{},"type":"object"},"name":"read","description":"Not available in this request."}]}`},
		{"synthesis with tools kept forbids calls", func(o *Options) { o.NoCache = true },
			&harness.Request{Final: true, Messages: toolHistory[:1], Tools: []harness.ToolSpec{{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
			`{"max_tokens":8192,"messages":[{"content":[{"text":"q","type":"text"}],"role":"user"}],"model":"claude-test","tool_choice":{"type":"none"},"tools":[{"input_schema":{"properties":{},"type":"object"},"name":"read"}]}`},
		{"no system: the last tool is the first breakpoint; empty messages are filled", nil,
			&harness.Request{Messages: []harness.Message{{Role: harness.RoleUser}, {Role: harness.RoleAssistant}, {Role: harness.RoleUser, Parts: []harness.Part{harness.ImagePart("image/bmp", []byte{1})}}},
				Tools: []harness.ToolSpec{{Name: "a"}, {Name: "b"}}},
			`{"max_tokens":8192,"messages":[{"content":[{"text":"[empty message]","cache_control":{"type":"ephemeral"},"type":"text"}],"role":"user"},{"content":[{"text":"[empty message]","type":"text"}],"role":"assistant"},{"content":[{"text":"[image of type \"image/bmp\" (1 bytes) not shown: the model accepts png, jpeg, webp and gif]","cache_control":{"type":"ephemeral"},"type":"text"}],"role":"user"}],"model":"claude-test","tools":[{"input_schema":{"properties":{},"type":"object"},"name":"a"},{"input_schema":{"properties":{},"type":"object"},"name":"b","cache_control":{"type":"ephemeral"}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(wiretest.JSON(okBody))
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
		{Messages: []harness.Message{{Role: harness.RoleUser}}, Tools: []harness.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`"x"`)}}},
		{Messages: []harness.Message{{Role: harness.RoleUser}}, Tools: []harness.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"required":"x"}`)}}},
	} {
		if _, err := m.Generate(context.Background(), req); err == nil {
			t.Errorf("no error for %+v", req)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

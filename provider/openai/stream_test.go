package openai

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/internal/wiretest"
)

// chunk is one chat.completion.chunk event with the given choices (a JSON
// array) and usage (JSON or "").
func chunk(choices, usage string) wiretest.Event {
	s := `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-test-2026","choices":` + choices
	if usage != "" {
		s += `,"usage":` + usage
	}
	return wiretest.Event{Data: s + "}"}
}

func delta(d string) wiretest.Event {
	return chunk(`[{"index":0,"delta":`+d+`,"finish_reason":null}]`, "")
}

func finish(reason string) wiretest.Event {
	return chunk(`[{"index":0,"delta":{},"finish_reason":"`+reason+`"}]`, "")
}

var done = wiretest.Event{Data: "[DONE]"}

func toolStream() []wiretest.Event {
	return []wiretest.Event{
		delta(`{"role":"assistant","content":""}`),
		delta(`{"content":"Let me "}`),
		delta(`{"content":"look."}`),
		delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`),
		delta(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"grep","arguments":"{\"q\":\"x\"}"}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`),
		finish("tool_calls"),
		chunk(`[]`, `{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240,"prompt_tokens_details":{"cached_tokens":1024}}`),
		done,
	}
}

func TestGenerateStream(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Stream(toolStream()...))
	m := newTestModel(t, srv, nil)
	var pieces []string
	resp, err := m.GenerateStream(context.Background(), userRequest("go"), func(s string) { pieces = append(pieces, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pieces, []string{"Let me ", "look."}) {
		t.Errorf("onText got %q", pieces)
	}
	want := &harness.Response{
		Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Let me look.")}, ToolCalls: []harness.ToolCall{
			{ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`)},
			{ID: "call_2", Name: "grep", Args: json.RawMessage(`{"q":"x"}`)},
		}},
		Usage:      harness.Usage{Input: 1200, Cached: 1024, Output: 40},
		StopReason: "tool_calls",
		Model:      "gpt-test-2026",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n%+v\nwant:\n%+v", resp, want)
	}
	sameJSON(t, srv.Requests()[0].Body, `{"messages":[{"content":"go","role":"user"}],"model":"gpt-test","stream_options":{"include_usage":true},"stream":true}`)
}

// Some servers send each call whole, all at index 0.
func TestGenerateStreamWholeCallsAtOneIndex(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Stream(
		delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]}`),
		delta(`{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"read","arguments":"{\"n\":1}"}}]}`),
		finish("tool_calls"), done))
	resp, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || string(resp.Message.ToolCalls[1].Args) != `{"n":1}` {
		t.Errorf("calls = %+v", resp.Message.ToolCalls)
	}
}

func TestGenerateStreamDroppedBeforeTextIsRetried(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		wiretest.Reply{Events: []wiretest.Event{delta(`{"role":"assistant","content":""}`)}, Drop: true},
		wiretest.Reply{Drop: true},
		wiretest.Stream(delta(`{"content":"hi"}`), finish("stop"), done),
	)
	var got strings.Builder
	resp, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(s string) { got.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "hi" || resp.Message.Text() != "hi" || len(srv.Requests()) != 3 {
		t.Errorf("text %q, answer %q, %d requests", got.String(), resp.Message.Text(), len(srv.Requests()))
	}
}

func TestGenerateStreamDroppedAfterTextIsNotRetried(t *testing.T) {
	for _, rep := range []wiretest.Reply{
		{Events: []wiretest.Event{delta(`{"content":"half"}`)}, Drop: true},
		// A clean end without a finish_reason is a stream cut short too.
		{Events: []wiretest.Event{delta(`{"content":"half"}`)}},
	} {
		srv := wiretest.New(t)
		srv.Enqueue(rep, wiretest.Stream(delta(`{"content":"whole"}`), finish("stop"), done))
		var got strings.Builder
		_, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(s string) { got.WriteString(s) })
		if err == nil {
			t.Fatal("no error")
		}
		if got.String() != "half" || len(srv.Requests()) != 1 {
			t.Errorf("text %q after %d requests; want the shown text only, no retry", got.String(), len(srv.Requests()))
		}
		if !retry.Transient(err) {
			t.Errorf("err = %v, want a transport failure", err)
		}
	}
}

func TestGenerateStreamErrorEvent(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		wiretest.Stream(wiretest.Event{Data: `{"error":{"message":"The server had an error","type":"server_error","code":null}}`}),
		wiretest.Stream(delta(`{"content":"ok"}`), finish("stop"), done),
	)
	resp, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("answer %q after %d requests", resp.Message.Text(), len(srv.Requests()))
	}

	srv = wiretest.New(t)
	srv.Enqueue(wiretest.Stream(wiretest.Event{Data: `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`}))
	_, err = newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(string) {})
	if !errors.Is(err, harness.ErrContextTooLarge) || len(srv.Requests()) != 1 {
		t.Errorf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

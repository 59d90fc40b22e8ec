package anthropic

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

func ev(name, data string) wiretest.Event { return wiretest.Event{Event: name, Data: data} }

func messageStart(usage string) wiretest.Event {
	return ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-2026","content":[],"stop_reason":null,"stop_sequence":null,"usage":`+usage+`}}`)
}

func textStart(i int) wiretest.Event {
	return ev("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"text","text":""}}`)
}

func textDelta(i int, s string) wiretest.Event {
	b, _ := json.Marshal(s)
	return ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"text_delta","text":`+string(b)+`}}`)
}

func toolStart(i int, id, name string) wiretest.Event {
	return ev("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"tool_use","id":"`+id+`","name":"`+name+`","input":{}}}`)
}

func jsonDelta(i int, s string) wiretest.Event {
	b, _ := json.Marshal(s)
	return ev("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+string(b)+`}}`)
}

func blockStop(i int) wiretest.Event {
	return ev("content_block_stop", `{"type":"content_block_stop","index":`+itoa(i)+`}`)
}

func messageDelta(stop, usage string) wiretest.Event {
	return ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":`+usage+`}`)
}

var (
	ping        = ev("ping", `{"type": "ping"}`)
	messageStop = ev("message_stop", `{"type":"message_stop"}`)
)

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func toolStream() []wiretest.Event {
	return []wiretest.Event{
		messageStart(`{"input_tokens":25,"cache_creation_input_tokens":100,"cache_read_input_tokens":4000,"output_tokens":1}`),
		textStart(0), ping,
		textDelta(0, "Let me "), textDelta(0, "look."),
		blockStop(0),
		toolStart(1, "toolu_1", "read"),
		jsonDelta(1, ""), jsonDelta(1, `{"path":`), jsonDelta(1, ` "a.go"}`),
		blockStop(1),
		toolStart(2, "toolu_2", "list"),
		blockStop(2),
		messageDelta("tool_use", `{"output_tokens":89}`),
		messageStop,
	}
}

func TestGenerateStream(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Stream(toolStream()...))
	var pieces []string
	resp, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(s string) { pieces = append(pieces, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pieces, []string{"Let me ", "look."}) {
		t.Errorf("onText got %q", pieces)
	}
	want := &harness.Response{
		Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Let me look.")}, ToolCalls: []harness.ToolCall{
			{ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path": "a.go"}`)},
			{ID: "toolu_2", Name: "list", Args: json.RawMessage(`{}`)},
		}},
		Usage:      harness.Usage{Input: 4125, Cached: 4000, CacheWrite: 100, Output: 89},
		StopReason: "tool_use",
		Model:      "claude-test-2026",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n%+v\nwant:\n%+v", resp, want)
	}
	var body map[string]any
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil || body["stream"] != true {
		t.Errorf("stream flag missing: %s", srv.Requests()[0].Body)
	}
}

func TestGenerateStreamRetries(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		// Overloaded before any text: retried.
		wiretest.Stream(messageStart(`{"input_tokens":1,"output_tokens":1}`), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		// Dropped before any text: retried.
		wiretest.Reply{Events: []wiretest.Event{messageStart(`{"input_tokens":1,"output_tokens":1}`), textStart(0)}, Drop: true},
		wiretest.Reply{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		wiretest.Stream(messageStart(`{"input_tokens":1,"output_tokens":1}`), textStart(0), textDelta(0, "hi"), blockStop(0), messageDelta("end_turn", `{"output_tokens":2}`), messageStop),
	)
	var w wiretest.Warnings
	var got strings.Builder
	resp, err := newTestModel(t, srv, nil).GenerateStream(w.Context(), userRequest("go"), func(s string) { got.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "hi" || resp.Message.Text() != "hi" || len(srv.Requests()) != 4 {
		t.Errorf("text %q, answer %q, %d requests", got.String(), resp.Message.Text(), len(srv.Requests()))
	}
	if ev := w.Events(); len(ev) != 3 || !strings.Contains(ev[0].Detail, "overloaded_error") {
		t.Errorf("warnings = %+v", ev)
	}
}

func TestGenerateStreamNotRetriedAfterText(t *testing.T) {
	for name, rep := range map[string]wiretest.Reply{
		"dropped":  {Events: []wiretest.Event{messageStart(`{"input_tokens":1,"output_tokens":1}`), textStart(0), textDelta(0, "half")}, Drop: true},
		"no stop":  {Events: []wiretest.Event{messageStart(`{"input_tokens":1,"output_tokens":1}`), textStart(0), textDelta(0, "half")}},
		"overload": {Events: []wiretest.Event{messageStart(`{"input_tokens":1,"output_tokens":1}`), textStart(0), textDelta(0, "half"), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(rep, wiretest.JSON(okBody))
			var got strings.Builder
			_, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(s string) { got.WriteString(s) })
			if err == nil {
				t.Fatal("no error")
			}
			if got.String() != "half" || len(srv.Requests()) != 1 {
				t.Errorf("text %q after %d requests", got.String(), len(srv.Requests()))
			}
			if name != "overload" && !retry.Transient(err) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestGenerateStreamContextTooLarge(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"},"request_id":"req_1"}`))
	_, err := newTestModel(t, srv, nil).GenerateStream(context.Background(), userRequest("go"), func(string) {})
	if !errors.Is(err, harness.ErrContextTooLarge) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

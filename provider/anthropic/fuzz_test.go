package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentharness/harness"
)

// FuzzMessages checks that any conversation content becomes a body the
// API accepts in shape: alternating roles, no empty message, tool_use input
// always a JSON object.
func FuzzMessages(f *testing.F) {
	f.Add("hello", `{"path":"a"}`, "tool output", "image/png", []byte{1, 2}, true, 2)
	f.Add("", `{"path": `, "", "image/svg+xml", []byte("<svg/>"), false, 0)
	f.Add("\xff", `[1,2]`, `{"json":1}`, "", []byte(nil), true, 5)
	m := &Model{opts: Options{Model: "m", MaxTokens: 10}}
	f.Fuzz(func(t *testing.T, text, args, result, mime string, img []byte, isErr bool, extraUsers int) {
		msgs := []harness.Message{
			{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart(text)}},
			{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text), harness.ImagePart(mime, img)}},
			{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}, ToolCalls: []harness.ToolCall{{ID: "c1", Name: "t", Args: json.RawMessage(args)}}},
			{Role: harness.RoleTool, ToolCallID: "c1", ToolName: "t", IsError: isErr, Parts: []harness.Part{harness.TextPart(result), harness.ImagePart(mime, img)}},
		}
		for range extraUsers % 4 {
			msgs = append(msgs, harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text)}})
		}
		p, err := m.params(&harness.Request{Messages: msgs, Final: isErr})
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Type  string          `json:"type"`
					Text  *string         `json:"text"`
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("the body is not JSON: %v", err)
		}
		for i, msg := range back.Messages {
			if i > 0 && msg.Role == back.Messages[i-1].Role {
				t.Fatalf("messages %d and %d share role %s", i-1, i, msg.Role)
			}
			if len(msg.Content) == 0 {
				t.Fatalf("message %d is empty", i)
			}
			for _, b := range msg.Content {
				if b.Type == "text" && (b.Text == nil || *b.Text == "") {
					t.Fatalf("empty text block in message %d", i)
				}
				if b.Type == "tool_use" {
					var obj map[string]any
					if json.Unmarshal(b.Input, &obj) != nil || obj == nil {
						t.Fatalf("tool_use input %s is not an object", b.Input)
					}
				}
			}
		}
	})
}

// FuzzAccumulator feeds arbitrary events to the stream accumulator.
func FuzzAccumulator(f *testing.F) {
	for _, s := range []string{
		`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"x","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\""}}`,
		`{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
		`{"type":"message_stop"}`,
	} {
		f.Add([]byte(s), []byte(s), []byte(`{"type":"message_stop"}`))
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var acc accumulator
		for _, raw := range [][]byte{a, b, c} {
			var ev anthropic.MessageStreamEventUnion
			if json.Unmarshal(raw, &ev) != nil {
				continue
			}
			if _, err := acc.add(ev); err != nil {
				return
			}
		}
		resp, err := acc.response()
		if err == nil && (resp.Usage.Validate() != nil || resp.Usage.Input < 0) {
			t.Fatalf("impossible usage accepted: %+v", resp.Usage)
		}
	})
}

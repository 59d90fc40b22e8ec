package openai

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"

	"github.com/agentharness/harness"
)

// FuzzMessages checks that any conversation content becomes a valid body
// and that tool-call arguments reach the wire verbatim.
func FuzzMessages(f *testing.F) {
	f.Add("hello", `{"path":"a"}`, "tool output", "image/png", []byte{1, 2}, true)
	f.Add("", `{"path": `, "", "image/svg+xml", []byte("<svg/>"), false)
	f.Add("\xff", "not json \x00", "{\"json\":1}", "", []byte(nil), true)
	m := &Model{opts: Options{Model: "m"}}
	f.Fuzz(func(t *testing.T, text, args, result, mime string, img []byte, isErr bool) {
		req := &harness.Request{
			System: text,
			Messages: []harness.Message{
				{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(text), harness.ImagePart(mime, img)}},
				{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}, ToolCalls: []harness.ToolCall{{ID: "c1", Name: "t", Args: json.RawMessage(args)}}},
				{Role: harness.RoleTool, ToolCallID: "c1", ToolName: "t", IsError: isErr, Parts: []harness.Part{harness.TextPart(result), harness.ImagePart(mime, img)}},
			},
		}
		p, err := m.params(req, true)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back struct {
			Messages []struct {
				ToolCalls []struct {
					Function struct{ Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("the body is not JSON: %v", err)
		}
		if utf8.ValidString(args) {
			for _, msg := range back.Messages {
				for _, c := range msg.ToolCalls {
					if c.Function.Arguments != args {
						t.Fatalf("arguments %q came back as %q", args, c.Function.Arguments)
					}
				}
			}
		}
	})
}

// FuzzAccumulator feeds arbitrary chunks to the stream accumulator.
func FuzzAccumulator(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"a","function":{"name":"x","arguments":"{"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}}`,
	} {
		f.Add([]byte(s), []byte(s))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var acc accumulator
		for _, raw := range [][]byte{a, b} {
			var ch openai.ChatCompletionChunk
			if json.Unmarshal(raw, &ch) != nil {
				continue
			}
			acc.add(ch)
		}
		resp, err := acc.response()
		if err != nil {
			if !errors.Is(err, harness.ErrInvalidResponse) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if resp.Usage.Validate() != nil {
			t.Fatalf("impossible usage accepted: %+v", resp.Usage)
		}
		if len(resp.Message.ToolCalls) != len(acc.calls) {
			t.Fatal("calls lost")
		}
	})
}

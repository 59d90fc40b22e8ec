package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestContent: a content is a string, a list of blocks, or nothing; any
// other JSON is an error naming what was expected.
func TestContent(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		blocks []Block
		text   string
		err    bool
	}{
		{raw: ``},
		{raw: `null`},
		{raw: `"hi"`, text: "hi"},
		{raw: `""`},
		{raw: `[]`, blocks: []Block{}},
		{raw: `[{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]`,
			blocks: []Block{{Type: "text", Text: "a"}, {Type: "tool_use", ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}},
		{raw: `[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"}],"is_error":true}]`,
			blocks: []Block{{Type: "tool_result", ToolUseID: "t1", Content: json.RawMessage(`[{"type":"text","text":"out"}]`), IsError: true}}},
		{raw: `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]`,
			blocks: []Block{{Type: "image", Source: &ImageSource{MediaType: "image/png", Data: "AAAA"}}}},
		{raw: `42`, err: true},
		{raw: `{"type":"text"}`, err: true},
		{raw: `[{"type":"text","text":5}]`, err: true},
	} {
		blocks, text, err := Content(json.RawMessage(tc.raw))
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.raw, err, tc.err)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "neither a string nor a list of content blocks") {
				t.Errorf("%s: error %q does not say what content may be", tc.raw, err)
			}
			continue
		}
		if text != tc.text || !reflect.DeepEqual(blocks, tc.blocks) {
			t.Errorf("%s: %+v %q, want %+v %q", tc.raw, blocks, text, tc.blocks, tc.text)
		}
	}
}

// TestUsage: Input counts every prompt token, the cached and the
// cache-written ones included.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		body string
		want harness.Usage
	}{
		{`{"input_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":7}`, harness.Usage{Input: 123, Cached: 100, CacheWrite: 20, Output: 7}},
		{`{"input_tokens":5,"output_tokens":1}`, harness.Usage{Input: 5, Output: 1}},
		{`{}`, harness.Usage{}},
	} {
		var u Usage
		if err := json.Unmarshal([]byte(tc.body), &u); err != nil {
			t.Fatal(err)
		}
		if got := u.Usage(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
	if got := (*Usage)(nil).Usage(); got != (harness.Usage{}) {
		t.Errorf("nil: %+v", got)
	}
}

// FuzzContent: Content never panics, returns blocks or a string (never
// both) or an error, and a string content reads back as what it encodes.
func FuzzContent(f *testing.F) {
	for _, s := range []string{``, `null`, `"hi"`, `[]`, `42`, `[{"type":"text","text":"a"}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":"x","is_error":true}]`,
		`[{"type":"image","source":{"media_type":"image/png","data":"AA"}}]`, `[{"type":1}]`, `{"a":[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		blocks, text, err := Content(json.RawMessage(raw))
		if err != nil {
			if blocks != nil || text != "" {
				t.Fatalf("%q: an error with a result", raw)
			}
			return
		}
		if blocks != nil && text != "" {
			t.Fatalf("%q: both blocks and a string", raw)
		}
		if text != "" {
			var s string
			if json.Unmarshal([]byte(raw), &s) != nil || s != text {
				t.Fatalf("%q: string %q is not what it encodes", raw, text)
			}
		}
	})
}

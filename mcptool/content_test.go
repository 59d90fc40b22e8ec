package mcptool

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConvertResultEdges(t *testing.T) {
	if r := convertResult(nil); r.FullText() == "" {
		t.Error("nil result: empty text")
	}
	if r := convertResult(&mcp.CallToolResult{}); !strings.Contains(r.FullText(), "no content") {
		t.Errorf("empty result: %q", r.FullText())
	}
	r := convertResult(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "denied"}}})
	if !r.IsError || r.FullText() != "denied" {
		t.Errorf("isError: %+v", r)
	}
	// A JSON blob is text; an image with no type defaults to PNG.
	r = convertResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x://a.json", MIMEType: "application/json", Blob: []byte(`{"a":1}`)}},
		&mcp.ImageContent{Data: []byte{1, 2}},
		&mcp.EmbeddedResource{},
	}})
	if !strings.Contains(r.Parts[0].Text, `{"a":1}`) || r.Parts[1].MIMEType != "image/png" || r.Parts[2].Type != harness.PartText {
		t.Errorf("%+v", r.Parts)
	}
	// _meta is kept for the log.
	r = convertResult(&mcp.CallToolResult{Meta: mcp.Meta{"trace": "t1"}, Content: []mcp.Content{&mcp.TextContent{Text: "x"}}})
	if m, _ := r.Meta[metaMCP].(map[string]any); m["trace"] != "t1" {
		t.Errorf("meta %v", r.Meta)
	}
}

func TestConvertStructured(t *testing.T) {
	long := strings.Repeat("a fairly long line of text\n", 4)
	for _, tc := range []struct {
		name       string
		res        *mcp.CallToolResult
		structured bool // Structured kept
		payload    int
	}{
		{"json as text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"b": 2, "a": 1}`}}, StructuredContent: map[string]any{"a": 1, "b": 2}}, true, len(`{"b": 2, "a": 1}`)},
		{"wrapper", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}}, StructuredContent: map[string]any{"content": long}}, false, len(long)},
		{"array of wrapped texts", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: long + "1"}, &mcp.TextContent{Text: long + "2"}},
			StructuredContent: map[string]any{"files": []any{map[string]any{"path": "/a", "text": long + "1"}, map[string]any{"path": "/b", "text": long + "2"}}},
		}, false, 2*len(long) + 2},
		{"different data", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 rows"}}, StructuredContent: map[string]any{"rows": []any{1, 2, 3}}}, true, len("3 rows") + len(`{"rows":[1,2,3]}`)},
		{"short strings are not replaced", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"status": "ok"}}, true, 2 + len(`{"status":"ok"}`)},
		{"big remainder stays structured", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}}, StructuredContent: map[string]any{"content": long, "extra": strings.Repeat("e", 2000)}}, true, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := convertResult(tc.res)
			if (len(r.Structured) > 0) != tc.structured {
				t.Errorf("Structured kept %v, want %v (%s)", len(r.Structured) > 0, tc.structured, r.Structured)
			}
			if tc.payload >= 0 && r.PayloadSize() != tc.payload {
				t.Errorf("payload %d, want %d", r.PayloadSize(), tc.payload)
			}
		})
	}
}

// FuzzConvertResult: any result the SDK can decode maps without a panic,
// one part per content block, and IsError carried over.
func FuzzConvertResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"iVBORw0K","mimeType":"image/png"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}],"isError":true}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","size":12}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"x:a","blob":"AAEC","mimeType":"application/octet-stream"}}]}`,
		`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"text","text":"aaaaaaaaaaaaaaaaaaaaa"}],"structuredContent":{"c":"aaaaaaaaaaaaaaaaaaaaa","n":[1,{"x":"aaaaaaaaaaaaaaaaaaaaa"}]}}`,
		`{"content":[],"structuredContent":[1,2,"x"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		r := convertResult(&res)
		if r.IsError != res.IsError {
			t.Fatal("IsError lost")
		}
		want := len(res.Content)
		if want == 0 && len(r.Structured) == 0 {
			want = 1 // the "no content" note
		}
		if len(r.Parts) != want {
			t.Fatalf("%d parts for %d blocks", len(r.Parts), len(res.Content))
		}
		_ = r.PayloadSize()
	})
}

// convertResult maps each MCP content kind to harness parts; a
// structuredContent that wraps the text is not sent twice.
func Example_convertResult() {
	text := "first line of the file\nsecond line of the file\n"
	res := convertResult(&mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: text},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG...")},
			&mcp.ResourceLink{URI: "file:///notes/todo.md", Name: "todo.md"},
		},
		StructuredContent: map[string]any{"content": text},
	})
	for _, p := range res.Parts {
		fmt.Println(p.Type, p.Size())
	}
	fmt.Println(res.Parts[2].Text)
	shape, _ := res.Meta[metaStructuredShape].(json.RawMessage)
	fmt.Printf("payload: %d bytes; structured content kept as its shape %s\n", res.PayloadSize(), shape)
	// Output:
	// text 47
	// image 7
	// text 53
	// [resource link] file:///notes/todo.md (name: todo.md)
	// payload: 107 bytes; structured content kept as its shape {"content":"[text part 1]"}
}

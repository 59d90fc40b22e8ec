package benchlab

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/spill"
)

// FuzzOutlinePreview: on any text, outline returns whole lines in text
// order, the outline's spans stay within the text, and the guard's model
// copy of a spilled file keeps the ceiling and is valid UTF-8, and, when
// an outline is shown, at most the preview's size besides its marker.
func FuzzOutlinePreview(f *testing.F) {
	for _, s := range []string{goSnippet, pySnippet, tsSnippet, javaSnippet} {
		f.Add(s, uint16(4<<10), uint8(0))
		f.Add(withLineNumbers(s, "→"), uint16(6<<10), uint8(1))
		f.Add(strings.Repeat(withLineNumbers(s, "\t"), 20), uint16(2<<10), uint8(2))
	}
	f.Add(strings.Repeat("func \xff\xfe(x) {\n", 3000), uint16(4<<10), uint8(1))
	f.Add(strings.Repeat("export const a = 1\r\n", 2000), uint16(1<<10), uint8(0))
	f.Add(strings.Repeat("x", 30000), uint16(3<<10), uint8(2))
	f.Add("", uint16(0), uint8(0))
	f.Fuzz(func(t *testing.T, text string, limit uint16, variant uint8) {
		decls := outline([]byte(text))
		prev := 0
		for _, d := range decls {
			if d.start < prev || d.end <= d.start || d.end > len(text) || d.start > 0 && text[d.start-1] != '\n' {
				t.Fatalf("declaration [%d, %d) after %d is not a line of the text", d.start, d.end, prev)
			}
			prev = d.end
		}
		pv := []outlinePreview{{}, {head: 1 << 10, tail: 512}, {size: 8 << 10}, {relevant: 3 << 10}, {imports: true}}[int(variant)%5]
		size := pv.size
		if size == 0 {
			size = defaultOutlineSize
		}
		prev = 0
		for _, d := range importLines([]byte(text)) {
			if d.start < prev || d.end <= d.start || d.end > len(text) || d.start > 0 && text[d.start-1] != '\n' {
				t.Fatalf("import [%d, %d) after %d is not a run of lines of the text", d.start, d.end, prev)
			}
			prev = d.end
		}
		for _, sp := range outlineSpans([]byte(text), decls, pv.head, pv.tail, size) {
			if sp.Start < 0 || sp.End > len(text) || sp.Start > sp.End {
				t.Fatalf("span [%d, %d) outside a text of %d bytes", sp.Start, sp.End, len(text))
			}
		}
		// A ceiling from 1 KiB to 24 KiB, the text made to exceed it.
		ceiling := 1<<10 + int(limit)%(23<<10)
		for len(text) > 0 && len(text) <= ceiling {
			text += text
		}
		read := &harness.ToolCall{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"file_path":"/repo/a.go"}`)}
		g := (&guard.ResultPolicy{MaxBytes: ceiling, Preview: pv, Store: memStore{}}).Guard()
		res, err := g(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(text)}}, nil
		})(context.Background(), read)
		if err != nil {
			t.Fatal(err)
		}
		out := res.ModelText()
		if len(out) > ceiling {
			t.Fatalf("model copy of %d bytes over the %d-byte ceiling", len(out), ceiling)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("model copy is not valid UTF-8")
		}
		// The outline's own bound (other results get guard.Relevant's).
		if len(outline([]byte(text))) >= minOutlineDecls {
			if n := previewBytes(out); n > size+2*len("\n\n") {
				t.Fatalf("preview of %d bytes, more than its %d", n, size)
			}
		}
	})
}

// memStore is a spill.Store that keeps nothing: a fuzz run saves
// thousands of results and needs only their locators.
type memStore struct{}

func (memStore) Save(_ context.Context, e spill.Entry, content io.Reader) (spill.Saved, error) {
	n, err := io.Copy(io.Discard, content)
	return spill.Saved{Locator: ".harness/spill/fuzz/" + e.CallID + ".txt", Bytes: n, Hint: "Read it with read_file on that path."}, err
}

package mcptool

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Meta keys convertResult writes.
const (
	// metaBlobs holds the binary payloads the model is not sent (audio,
	// non-image embedded blobs) as a []Blob, so the stored result keeps them.
	metaBlobs = "mcp_blobs"
	// metaStructuredShape holds the shape of a structuredContent that
	// repeated the text content: the JSON with each repeated string replaced
	// by "[text part N]" (N from 1).
	metaStructuredShape = "mcp_structured_shape"
	// metaMCP holds the result's own _meta, when the server sent one.
	metaMCP = "mcp_meta"
)

// shapeMax bounds the shape kept in metaStructuredShape. A larger shape
// means the structured content carries more than the text does, so it is
// kept whole in Structured instead.
const shapeMax = 1024

// blob is a binary payload of a result that the model is not sent.
type blob struct {
	// Part is the index (from 0) of the text part that stands in for it.
	Part     int    `json:"part"`
	Kind     string `json:"kind"` // "audio" or "resource"
	URI      string `json:"uri,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	Data     []byte `json:"data"`
}

// convertResult maps an MCP tool result to a harness result, each payload
// once:
//
//   - text → a text part;
//   - image → an image part holding the raw bytes;
//   - audio → a text note ("[audio: audio/wav, 1,234 bytes, not shown]"),
//     the bytes kept in Meta[metaBlobs], because harness parts have no
//     audio kind and no provider accepts audio in a tool result;
//   - resource link → one text line with its URI, name, type, size and
//     description;
//   - embedded resource → its text under a one-line header; an image blob
//     → an image part; a UTF-8 blob of a textual type → its text; another
//     blob → a note, its bytes in Meta[metaBlobs];
//   - structuredContent → Structured. When the text parts already carry it
//     (the same JSON, or a wrapper such as {"content": <the text>}, as the
//     filesystem server sends), sending both would double the payload:
//     Structured is left empty and its shape is kept in
//     Meta[metaStructuredShape] so the stored result still says how it was
//     structured.
//
// isError becomes IsError. An empty result gets a text part saying so,
// because an empty tool message reads to a model as a hang.
func convertResult(res *mcp.CallToolResult) *harness.ToolResult {
	out := &harness.ToolResult{}
	if res == nil {
		out.Parts = []harness.Part{harness.TextPart("(the tool returned no result)")}
		return out
	}
	out.IsError = res.IsError
	var blobs []blob
	addBlob := func(b blob) {
		b.Part = len(out.Parts) - 1
		blobs = append(blobs, b)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Parts = append(out.Parts, harness.TextPart(c.Text))
		case *mcp.ImageContent:
			out.Parts = append(out.Parts, harness.ImagePart(orDefault(c.MIMEType, "image/png"), c.Data))
		case *mcp.AudioContent:
			out.Parts = append(out.Parts, harness.TextPart(fmt.Sprintf(
				"[audio: %s, %s bytes; audio is not shown to the model, the bytes are kept in the transcript]",
				orDefault(c.MIMEType, "unknown type"), commas(len(c.Data)))))
			addBlob(blob{Kind: "audio", MIMEType: c.MIMEType, Data: c.Data})
		case *mcp.ResourceLink:
			out.Parts = append(out.Parts, harness.TextPart(resourceLinkLine(c)))
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				out.Parts = append(out.Parts, harness.TextPart("[embedded resource with no contents]"))
				continue
			}
			p, blob := embeddedPart(c.Resource)
			out.Parts = append(out.Parts, p)
			if blob != nil {
				addBlob(*blob)
			}
		default:
			// Content kinds a tool result should not carry (tool_use,
			// tool_result belong to sampling); keep them visibly.
			raw, err := json.Marshal(c)
			if err != nil {
				raw = []byte(fmt.Sprintf("%T", c))
			}
			out.Parts = append(out.Parts, harness.TextPart("[unsupported MCP content] "+string(raw)))
		}
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		switch {
		case err != nil:
			out.Parts = append(out.Parts, harness.TextPart("[structuredContent could not be encoded: "+err.Error()+"]"))
		default:
			if shape, ok := structuredShape(res.StructuredContent, out.Parts); ok {
				setMeta(out, metaStructuredShape, shape)
			} else {
				out.Structured = raw
			}
		}
	}
	if len(out.Parts) == 0 && len(out.Structured) == 0 {
		out.Parts = []harness.Part{harness.TextPart("(the tool returned no content)")}
	}
	if len(blobs) > 0 {
		setMeta(out, metaBlobs, blobs)
	}
	if len(res.Meta) > 0 {
		setMeta(out, metaMCP, map[string]any(res.Meta))
	}
	return out
}

func setMeta(r *harness.ToolResult, k string, v any) {
	if r.Meta == nil {
		r.Meta = map[string]any{}
	}
	r.Meta[k] = v
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func resourceLinkLine(c *mcp.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link] ")
	b.WriteString(c.URI)
	var facts []string
	if c.Name != "" {
		facts = append(facts, "name: "+c.Name)
	}
	if c.Title != "" && c.Title != c.Name {
		facts = append(facts, "title: "+c.Title)
	}
	if c.MIMEType != "" {
		facts = append(facts, "type: "+c.MIMEType)
	}
	if c.Size != nil {
		facts = append(facts, "size: "+commas(int(*c.Size))+" bytes")
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, ", ") + ")")
	}
	if c.Description != "" {
		b.WriteString(" — " + c.Description)
	}
	return b.String()
}

// embeddedPart maps an embedded resource to one part, and returns the blob
// to keep when the part does not carry the bytes.
func embeddedPart(r *mcp.ResourceContents) (harness.Part, *blob) {
	header := "[resource " + r.URI
	if r.MIMEType != "" {
		header += " (" + r.MIMEType + ")"
	}
	header += "]"
	switch {
	case r.Blob == nil:
		return harness.TextPart(header + "\n" + r.Text), nil
	case strings.HasPrefix(r.MIMEType, "image/"):
		return harness.ImagePart(r.MIMEType, r.Blob), nil
	case textualMIME(r.MIMEType) && utf8.Valid(r.Blob):
		return harness.TextPart(header + "\n" + string(r.Blob)), nil
	}
	note := fmt.Sprintf("%s binary, %s bytes; not shown to the model, the bytes are kept in the transcript", header, commas(len(r.Blob)))
	return harness.TextPart(note), &blob{Kind: "resource", URI: r.URI, MIMEType: r.MIMEType, Data: r.Blob}
}

func textualMIME(m string) bool {
	m, _, _ = strings.Cut(strings.ToLower(m), ";")
	switch {
	case m == "", strings.HasPrefix(m, "text/"):
		return true
	case strings.HasSuffix(m, "json"), strings.HasSuffix(m, "xml"), strings.HasSuffix(m, "yaml"),
		m == "application/javascript", m == "application/x-sh", m == "application/toml":
		return true
	}
	return false
}

// structuredShape reports whether the structured content wraps the text
// parts: some of its strings are the whole text of a part, and what remains
// once they are replaced by "[text part N]" (keys, numbers, short strings)
// is small. It returns that shape. Structured content that is a text part's
// JSON is not a wrapper: harness already counts it once.
func structuredShape(v any, parts []harness.Part) (any, bool) {
	texts := map[string]int{}
	for i, p := range parts {
		if p.Type != harness.PartText {
			continue
		}
		if _, dup := texts[p.Text]; !dup {
			texts[p.Text] = i
		}
		// The same JSON sent as text (what the MCP specification advises):
		// Structured stays, and harness counts the payload once
		// (ToolResult.FullParts).
		var parsed any
		if t := strings.TrimSpace(p.Text); t != "" && (t[0] == '{' || t[0] == '[') &&
			json.Unmarshal([]byte(t), &parsed) == nil && jsonSame(parsed, v) {
			return nil, false
		}
	}
	replaced := 0
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if i, ok := texts[x]; ok {
				if ref := fmt.Sprintf("[text part %d]", i+1); len(ref) < len(x) {
					replaced++
					return ref
				}
			}
			return x
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[k] = walk(e)
			}
			return m
		case []any:
			s := make([]any, len(x))
			for i, e := range x {
				s[i] = walk(e)
			}
			return s
		}
		return x
	}
	shape := walk(v)
	if replaced == 0 {
		return nil, false
	}
	b, err := json.Marshal(shape)
	if err != nil || len(b) > shapeMax {
		return nil, false
	}
	return json.RawMessage(b), true
}

func jsonSame(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

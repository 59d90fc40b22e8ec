package harness

import (
	"encoding/json"
	"strings"
)

// Role says who produced a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType says what a [Part] holds.
type PartType string

// The kinds of content a message or tool result carries.
const (
	PartText  PartType = "text"
	PartImage PartType = "image"
	PartJSON  PartType = "json"
)

// Part is one piece of content: text, an image, or structured JSON.
// Exactly the field that matches Type is meaningful.
type Part struct {
	Type PartType `json:"type"`
	// Text is the content of a text part.
	Text string `json:"text,omitempty"`
	// MIMEType is the media type of an image part ("image/png").
	MIMEType string `json:"mime_type,omitempty"`
	// Data holds the raw bytes of an image part (not base64).
	Data []byte `json:"data,omitempty"`
	// JSON is the content of a structured part.
	JSON json.RawMessage `json:"json,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// ImagePart returns an image part holding raw image bytes.
func ImagePart(mimeType string, data []byte) Part {
	return Part{Type: PartImage, MIMEType: mimeType, Data: data}
}

// JSONPart returns a structured part. The JSON is kept as given.
func JSONPart(raw json.RawMessage) Part { return Part{Type: PartJSON, JSON: raw} }

// Size reports how many bytes of this part a model is sent as content:
// the text, the serialized JSON, or the raw image bytes.
func (p Part) Size() int {
	switch p.Type {
	case PartText:
		return len(p.Text)
	case PartJSON:
		return len(p.JSON)
	case PartImage:
		return len(p.Data)
	}
	return 0
}

// Message is one entry of a request or a transcript.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failed call.
	IsError bool `json:"is_error,omitempty"`
}

// Text joins the message's text parts and the text form of its JSON parts.
func (m Message) Text() string { return partsText(m.Parts) }

// partsText joins the text parts and serialized JSON parts of parts with
// newlines between them. Images are left out.
func partsText(parts []Part) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		if parts[0].Type == PartText {
			return parts[0].Text
		}
	}
	var b strings.Builder
	for _, p := range parts {
		var s string
		switch p.Type {
		case PartText:
			s = p.Text
		case PartJSON:
			s = string(p.JSON)
		default:
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

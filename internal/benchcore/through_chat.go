package benchcore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

// The Chat Completions request --through sends and reads back. The codec
// keeps what the token count and the cached prefix see: every text, image
// and JSON part, tool-call ids, names and arguments (bytes as recorded),
// and each tool's parameters schema as raw bytes, so a pass-through proxy
// measures exactly as none.

type chatReq struct {
	Model    string     `json:"model,omitempty"`
	Messages []chatMsg  `json:"messages"`
	Tools    []chatTool `json:"tools,omitempty"`
	Stream   bool       `json:"stream,omitempty"`
}

type chatMsg struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []chatCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

// chatRequestBody is the streamed Chat Completions request of msgs and tools.
func chatRequestBody(model string, msgs []harness.Message, tools []harness.ToolSpec) ([]byte, error) {
	req := chatReq{Model: model, Stream: true, Messages: make([]chatMsg, 0, len(msgs))}
	for _, m := range msgs {
		cm := chatMsg{Role: string(m.Role), ToolCallID: m.ToolCallID}
		content, err := chatContent(m.Parts)
		if err != nil {
			return nil, err
		}
		cm.Content = content
		for _, tc := range m.ToolCalls {
			c := chatCall{ID: tc.ID, Type: "function"}
			c.Function.Name, c.Function.Arguments = tc.Name, string(tc.Args)
			cm.ToolCalls = append(cm.ToolCalls, c)
		}
		req.Messages = append(req.Messages, cm)
	}
	for _, t := range tools {
		ct := chatTool{Type: "function"}
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, t.InputSchema
		req.Tools = append(req.Tools, ct)
	}
	return marshalNoEscape(req)
}

// chatContent is one text part as a string, anything else as a part list.
func chatContent(parts []harness.Part) (json.RawMessage, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	if len(parts) == 1 && parts[0].Type == harness.PartText {
		return marshalNoEscape(parts[0].Text)
	}
	var out []chatPart
	for _, p := range parts {
		switch p.Type {
		case harness.PartImage:
			cp := chatPart{Type: "image_url", ImageURL: &struct {
				URL string `json:"url"`
			}{"data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)}}
			out = append(out, cp)
		case harness.PartJSON:
			out = append(out, chatPart{Type: "text", Text: string(p.JSON)})
		default:
			out = append(out, chatPart{Type: "text", Text: p.Text})
		}
	}
	return marshalNoEscape(out)
}

// marshalNoEscape is json.Marshal without HTML escaping (and without the
// encoder's trailing newline).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("bench: encoding a Chat Completions request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// parseChatRequest reads a Chat Completions request body back into
// messages and tool schemas ("developer" is read as system).
func parseChatRequest(body []byte) ([]harness.Message, []harness.ToolSpec, error) {
	var req chatReq
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, fmt.Errorf("not a Chat Completions request: %w", err)
	}
	msgs := make([]harness.Message, 0, len(req.Messages))
	for i, cm := range req.Messages {
		m := harness.Message{Role: harness.Role(cm.Role), ToolCallID: cm.ToolCallID}
		if cm.Role == "developer" {
			m.Role = harness.RoleSystem
		}
		parts, err := chatParts(cm.Content)
		if err != nil {
			return nil, nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		m.Parts = parts
		for _, c := range cm.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, harness.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)})
		}
		msgs = append(msgs, m)
	}
	var tools []harness.ToolSpec
	for _, t := range req.Tools {
		tools = append(tools, harness.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return msgs, tools, nil
}

// chatParts reads a message's content: null, a string or a part list.
func chatParts(raw json.RawMessage) ([]harness.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("content: %w", err)
		}
		return []harness.Part{harness.TextPart(s)}, nil
	}
	var list []chatPart
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	var parts []harness.Part
	for _, p := range list {
		if p.ImageURL == nil {
			parts = append(parts, harness.TextPart(p.Text))
			continue
		}
		mime, data, ok := decodeDataURL(p.ImageURL.URL)
		if !ok {
			parts = append(parts, harness.TextPart(p.ImageURL.URL))
			continue
		}
		parts = append(parts, harness.Part{Type: harness.PartImage, MIMEType: mime, Data: data})
	}
	return parts, nil
}

// decodeDataURL splits a base64 data URL into its media type and bytes.
func decodeDataURL(u string) (string, []byte, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, false
	}
	head, b64, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(head, ";base64")
	if !ok || !isB64 {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", nil, false
	}
	return mime, data, true
}

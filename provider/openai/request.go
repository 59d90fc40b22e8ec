package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentharness/harness"
)

// imageTypes are the image media types Chat Completions accepts.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// params builds the request body. It is a pure function of req and the
// options, so equal requests give equal bytes (prompt caches depend on it).
func (m *Model) params(req *harness.Request, stream bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(m.opts.Model)}
	msgs, err := messages(req)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	for _, spec := range req.Tools {
		t, err := tool(spec)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, t)
	}
	if req.Final && len(p.Tools) > 0 {
		// Tools offered on the synthesis call keep the prompt prefix (and
		// its cache) intact; "none" still forbids calling them.
		p.ToolChoice.OfAuto = openai.String("none")
	}
	if n := req.MaxOutputTokens; n > 0 || m.opts.MaxTokens > 0 {
		if n <= 0 {
			n = m.opts.MaxTokens
		}
		if m.opts.LegacyMaxTokens {
			p.MaxTokens = openai.Int(int64(n))
		} else {
			p.MaxCompletionTokens = openai.Int(int64(n))
		}
	}
	if stream {
		p.StreamOptions.IncludeUsage = openai.Bool(true)
	}
	return p, nil
}

// tool converts a tool spec to a function tool.
func tool(spec harness.ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	schema, err := schemaObject(spec.InputSchema)
	if err != nil {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("openai: tool %q: %w", spec.Name, err)
	}
	def := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: schema}
	if spec.Description != "" {
		def.Description = openai.String(spec.Description)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}

// schemaObject returns the schema's top-level members with their values
// kept verbatim. An empty schema means any object.
func schemaObject(raw json.RawMessage) (shared.FunctionParameters, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	out := make(shared.FunctionParameters, len(members))
	for k, v := range members {
		out[k] = v
	}
	return out, nil
}

// hasSystemMessage reports whether Messages carries the system prompt
// itself; Request.System is then not sent again.
func hasSystemMessage(req *harness.Request) bool {
	for _, m := range req.Messages {
		if m.Role == harness.RoleSystem {
			return true
		}
	}
	return false
}

// messages converts the conversation. Images of tool messages are held back
// until the run of tool messages ends (a tool message must directly follow
// the assistant message that called it, or another tool message), then
// sent as one user message.
func messages(req *harness.Request) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" && !hasSystemMessage(req) {
		out = append(out, openai.SystemMessage(req.System))
	}
	var pending []openai.ChatCompletionContentPartUnionParam
	flush := func() {
		if len(pending) > 0 {
			out = append(out, openai.UserMessage(pending))
			pending = nil
		}
	}
	for i, msg := range req.Messages {
		if msg.Role != harness.RoleTool {
			flush()
		}
		switch msg.Role {
		case harness.RoleSystem:
			out = append(out, openai.SystemMessage(msg.Text()))
		case harness.RoleUser:
			out = append(out, userMessage(msg.Parts))
		case harness.RoleAssistant:
			out = append(out, assistantMessage(msg))
		case harness.RoleTool:
			out = append(out, openai.ToolMessage(toolText(msg.Parts), msg.ToolCallID))
			if imgs := imageParts(msg.Parts); len(imgs) > 0 {
				intro := fmt.Sprintf("Image(s) returned by tool call %s (%s):", msg.ToolCallID, msg.ToolName)
				pending = append(pending, openai.TextContentPart(intro))
				pending = append(pending, imgs...)
			}
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	flush()
	return out, nil
}

// userMessage sends plain text as a string and switches to content parts
// only when there are images.
func userMessage(parts []harness.Part) openai.ChatCompletionMessageParamUnion {
	imgs := false
	for _, p := range parts {
		if p.Type == harness.PartImage {
			imgs = true
		}
	}
	if !imgs {
		return openai.UserMessage(harness.Message{Parts: parts}.Text())
	}
	var content []openai.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch p.Type {
		case harness.PartText:
			content = append(content, openai.TextContentPart(p.Text))
		case harness.PartJSON:
			content = append(content, openai.TextContentPart(string(p.JSON)))
		case harness.PartImage:
			content = append(content, imagePart(p))
		}
	}
	return openai.UserMessage(content)
}

// toolText is the content of a tool message: its text and JSON parts, and
// a note for each image the model cannot be shown.
func toolText(parts []harness.Part) string {
	var b strings.Builder
	for _, p := range parts {
		var s string
		switch p.Type {
		case harness.PartText:
			s = p.Text
		case harness.PartJSON:
			s = string(p.JSON)
		case harness.PartImage:
			if _, ok := imageType(p); ok {
				continue
			}
			s = unsupportedImage(p)
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

// imageParts returns the images of parts the model can be shown.
func imageParts(parts []harness.Part) []openai.ChatCompletionContentPartUnionParam {
	var out []openai.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		if _, ok := imageType(p); ok && p.Type == harness.PartImage {
			out = append(out, imagePart(p))
		}
	}
	return out
}

func imageType(p harness.Part) (string, bool) {
	mt := strings.ToLower(strings.TrimSpace(p.MIMEType))
	return mt, imageTypes[mt]
}

// unsupportedImage describes an image of a type the API does not accept:
// its bytes would be rejected, and base64 as text would only burn tokens.
func unsupportedImage(p harness.Part) string {
	return fmt.Sprintf("[image of type %q (%d bytes) not shown: the model accepts png, jpeg, webp and gif]", p.MIMEType, len(p.Data))
}

// imagePart sends an image as a data URL, or the note of unsupportedImage.
func imagePart(p harness.Part) openai.ChatCompletionContentPartUnionParam {
	mt, ok := imageType(p)
	if !ok {
		return openai.TextContentPart(unsupportedImage(p))
	}
	url := "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url})
}

// assistantMessage sends the text (omitted when empty and there are calls)
// and the tool calls with their arguments verbatim.
func assistantMessage(msg harness.Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	text := msg.Text()
	if text != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = openai.String(text)
	}
	for _, c := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      c.Name,
					Arguments: string(c.Args),
				},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

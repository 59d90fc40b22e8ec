package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/agentharness/harness"
)

// imageTypes are the image media types the Messages API accepts.
var imageTypes = map[string]anthropic.Base64ImageSourceMediaType{
	"image/jpeg": anthropic.Base64ImageSourceMediaTypeImageJPEG,
	"image/png":  anthropic.Base64ImageSourceMediaTypeImagePNG,
	"image/gif":  anthropic.Base64ImageSourceMediaTypeImageGIF,
	"image/webp": anthropic.Base64ImageSourceMediaTypeImageWebP,
}

// emptyContent stands in for a message with no content: the API rejects
// empty messages and empty text blocks.
const emptyContent = "[empty message]"

// params builds the request body. It is a pure function of req and the
// options, so equal requests give equal bytes (prompt caches depend on it).
func (m *Model) params(req *harness.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: m.opts.Model, MaxTokens: int64(m.opts.MaxTokens)}
	if req.MaxOutputTokens > 0 {
		p.MaxTokens = int64(req.MaxOutputTokens)
	}
	p.System = system(req)
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
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: t})
	}
	if len(p.Tools) == 0 {
		// The API refuses tool_use and tool_result blocks in a request
		// that defines no tools, which is what a synthesis call with tools
		// withheld looks like: declare the tools the history used.
		for _, name := range usedTools(req) {
			p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
				Name:        name,
				Description: param.NewOpt("Not available in this request."),
				InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
			}})
		}
		if len(p.Tools) > 0 {
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		}
	} else if req.Final {
		// Tools offered on the synthesis call keep the prompt prefix (and
		// its cache) intact; "none" still forbids calling them.
		p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	if !m.opts.NoCache {
		setBreakpoints(&p)
	}
	return p, nil
}

// system returns the system prompt blocks: one per system message, else
// Request.System.
func system(req *harness.Request) []anthropic.TextBlockParam {
	var out []anthropic.TextBlockParam
	found := false
	for _, msg := range req.Messages {
		if msg.Role != harness.RoleSystem {
			continue
		}
		found = true
		if t := msg.Text(); t != "" {
			out = append(out, anthropic.TextBlockParam{Text: t})
		}
	}
	if !found && req.System != "" {
		out = append(out, anthropic.TextBlockParam{Text: req.System})
	}
	return out
}

// messages converts the non-system messages, merging consecutive messages
// of one role (tool results count as user content).
func messages(req *harness.Request) ([]anthropic.MessageParam, error) {
	var out []anthropic.MessageParam
	add := func(role string, blocks []anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if role == "user" && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
			if role == "assistant" && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			}
		}
		if role == "user" {
			out = append(out, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}})
		} else {
			out = append(out, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}})
		}
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case harness.RoleSystem:
			continue
		case harness.RoleUser:
			add("user", contentBlocks(msg.Parts))
		case harness.RoleAssistant:
			add("assistant", assistantBlocks(msg))
		case harness.RoleTool:
			add("user", []anthropic.ContentBlockParamUnion{{OfToolResult: toolResult(msg)}})
		default:
			return nil, fmt.Errorf("anthropic: message %d has unknown role %q", i, msg.Role)
		}
	}
	for _, mp := range out {
		switch {
		case mp.OfUser != nil && len(mp.OfUser.Content) == 0:
			mp.OfUser.Content = []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(emptyContent)}
		case mp.OfAssistant != nil && len(mp.OfAssistant.Content) == 0:
			mp.OfAssistant.Content = []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(emptyContent)}
		}
	}
	return out, nil
}

// contentBlocks converts the parts of a user message. Empty text parts are
// left out (the API rejects empty text blocks).
func contentBlocks(parts []harness.Part) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case harness.PartText:
			if p.Text != "" {
				out = append(out, anthropic.NewTextBlock(p.Text))
			}
		case harness.PartJSON:
			if len(p.JSON) > 0 {
				out = append(out, anthropic.NewTextBlock(string(p.JSON)))
			}
		case harness.PartImage:
			if img, ok := imageBlock(p); ok {
				out = append(out, anthropic.ContentBlockParamUnion{OfImage: img})
			} else {
				out = append(out, anthropic.NewTextBlock(unsupportedImage(p)))
			}
		}
	}
	return out
}

// assistantBlocks converts an assistant message: its text, then its calls.
func assistantBlocks(msg harness.Message) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range msg.Parts {
		switch p.Type {
		case harness.PartText:
			if p.Text != "" {
				out = append(out, anthropic.NewTextBlock(p.Text))
			}
		case harness.PartJSON:
			if len(p.JSON) > 0 {
				out = append(out, anthropic.NewTextBlock(string(p.JSON)))
			}
		}
	}
	for _, c := range msg.ToolCalls {
		out = append(out, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
			ID: c.ID, Name: c.Name, Input: toolInput(c.Args),
		}})
	}
	return out
}

// toolInput returns the call's arguments when they are a JSON object and
// {} otherwise: the API takes only an object, and the model has already
// been told its arguments were invalid.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		var buf bytes.Buffer
		if json.Compact(&buf, trimmed) == nil {
			return buf.Bytes()
		}
	}
	return json.RawMessage(`{}`)
}

// toolResult converts a tool message.
func toolResult(msg harness.Message) *anthropic.ToolResultBlockParam {
	r := &anthropic.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
	if msg.IsError {
		r.IsError = param.NewOpt(true)
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case harness.PartText:
			if p.Text != "" {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
			}
		case harness.PartJSON:
			if len(p.JSON) > 0 {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: string(p.JSON)}})
			}
		case harness.PartImage:
			if img, ok := imageBlock(p); ok {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img})
			} else {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: unsupportedImage(p)}})
			}
		}
	}
	return r
}

func imageBlock(p harness.Part) (*anthropic.ImageBlockParam, bool) {
	mt, ok := imageTypes[strings.ToLower(strings.TrimSpace(p.MIMEType))]
	if !ok {
		return nil, false
	}
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(p.Data), MediaType: mt,
	}}}, true
}

// unsupportedImage describes an image of a type the API does not accept:
// its bytes would be rejected, and base64 as text would only burn tokens.
func unsupportedImage(p harness.Part) string {
	return fmt.Sprintf("[image of type %q (%d bytes) not shown: the model accepts png, jpeg, webp and gif]", p.MIMEType, len(p.Data))
}

// tool converts a tool spec. The schema's members are kept verbatim:
// properties and required where the SDK has fields for them, the rest as
// extra fields.
func tool(spec harness.ToolSpec) (*anthropic.ToolParam, error) {
	t := &anthropic.ToolParam{Name: spec.Name}
	if spec.Description != "" {
		t.Description = param.NewOpt(spec.Description)
	}
	if len(bytes.TrimSpace(spec.InputSchema)) == 0 {
		t.InputSchema.Properties = map[string]any{}
		return t, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(spec.InputSchema, &members); err != nil || members == nil {
		return nil, fmt.Errorf("anthropic: tool %q: input schema is not a JSON object", spec.Name)
	}
	for k, v := range members {
		switch k {
		case "type":
			// Always "object" for a tool's input.
		case "properties":
			t.InputSchema.Properties = v
		case "required":
			if err := json.Unmarshal(v, &t.InputSchema.Required); err != nil {
				return nil, fmt.Errorf("anthropic: tool %q: input schema: required: %w", spec.Name, err)
			}
		default:
			if t.InputSchema.ExtraFields == nil {
				t.InputSchema.ExtraFields = map[string]any{}
			}
			t.InputSchema.ExtraFields[k] = v
		}
	}
	if t.InputSchema.Properties == nil {
		// An all-zero schema would be left out of the body, and the API
		// requires input_schema.
		t.InputSchema.Properties = map[string]any{}
	}
	return t, nil
}

// usedTools lists, in order of first use, the tools the history called.
func usedTools(req *harness.Request) []string {
	var names []string
	seen := map[string]bool{}
	for _, msg := range req.Messages {
		for _, c := range msg.ToolCalls {
			if !seen[c.Name] && c.Name != "" {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
		if msg.Role == harness.RoleTool && msg.ToolName != "" && !seen[msg.ToolName] {
			seen[msg.ToolName] = true
			names = append(names, msg.ToolName)
		}
	}
	return names
}

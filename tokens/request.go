package tokens

import (
	"encoding/json"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/provider/catalog"
)

// Fixed overheads of the chat wire formats, in tokens, beside those of
// promptunit (MessageOverhead, RequestOverhead).
const (
	// toolCallOverhead is added per tool call of an assistant message, for
	// the call's framing beside its id, name and arguments.
	toolCallOverhead = 3
	// toolOverhead is added per tool schema offered, beside the tokens of
	// the schema's JSON.
	toolOverhead = 3
)

// CountRequest counts the input tokens of req: every message (text parts,
// JSON parts, images, tool calls and call ids, each with its overhead) and
// every tool schema offered, plus the request's fixed overhead (the tokens
// that prime the reply). req.System is counted
// only when it is not already the first message (BuildView puts it there).
// A nil req counts 0.
func CountRequest(c Counter, req *harness.Request) int {
	if req == nil {
		return 0
	}
	n := promptunit.RequestOverhead
	if req.System != "" && !(len(req.Messages) > 0 && req.Messages[0].Role == harness.RoleSystem) {
		n += promptunit.MessageOverhead + c.Count(req.System)
	}
	for i := range req.Messages {
		n += CountMessage(c, &req.Messages[i])
	}
	for _, t := range req.Tools {
		n += CountTool(c, t)
	}
	return n
}

// CountMessage counts one message with its fixed framing overhead.
func CountMessage(c Counter, m *harness.Message) int {
	n := promptunit.MessageOverhead + CountParts(c, m.Parts)
	if m.ToolCallID != "" {
		n += c.Count(m.ToolCallID)
	}
	for _, tc := range m.ToolCalls {
		n += toolCallOverhead + c.Count(tc.ID) + c.Count(tc.Name) + c.Count(string(tc.Args))
	}
	return n
}

// CountParts counts content parts: text and JSON by their tokens, images
// by imageTokens under the rule of c ([WithImageRule]; OpenAI's when c
// names none).
func CountParts(c Counter, parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		switch p.Type {
		case harness.PartText:
			n += c.Count(p.Text)
		case harness.PartJSON:
			n += c.Count(string(p.JSON))
		case harness.PartImage:
			n += imageTokens(imageRuleOf(c), p.Data)
		}
	}
	return n
}

// CountTool counts a tool schema as it is sent: the JSON of its name,
// description and input schema, plus toolOverhead.
func CountTool(c Counter, spec harness.ToolSpec) int {
	b, err := json.Marshal(spec)
	if err != nil {
		return toolOverhead + c.Count(spec.Name) + c.Count(spec.Description) + c.Count(string(spec.InputSchema))
	}
	return toolOverhead + c.Count(string(b))
}

// imageTokens is what an image costs under rule, by its pixel size read
// from its header (PNG, JPEG, GIF, WebP: [catalog.ImageSize]), never by
// its bytes; an image whose header cannot be read is priced as a
// 1024×1024 one.
func imageTokens(rule catalog.ImageRule, data []byte) int {
	w, h, _ := catalog.ImageSize(data)
	return catalog.ImageTokens(rule, w, h)
}

// WithImageRule returns a Counter that counts text as c does and has
// [CountParts], [CountMessage] and [CountRequest] price images by rule
// (the provider the request goes to).
func WithImageRule(c Counter, rule catalog.ImageRule) Counter {
	if r, ok := c.(imageRuled); ok {
		c = r.Counter
	}
	return imageRuled{Counter: c, rule: rule}
}

// imageRuled is a Counter with the image rule of its provider.
type imageRuled struct {
	Counter
	rule catalog.ImageRule
}

// imageRuleOf is the image rule c prices by: its own, or OpenAI's.
func imageRuleOf(c Counter) catalog.ImageRule {
	if r, ok := c.(imageRuled); ok {
		return r.rule
	}
	return catalog.ImageOpenAI
}

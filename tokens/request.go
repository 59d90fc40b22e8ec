package tokens

import (
	"bytes"
	"encoding/json"
	"image"
	_ "image/gif"  // image.DecodeConfig for GIF images in messages
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG

	"github.com/agentharness/harness"
)

// Fixed overheads of the chat wire formats, in tokens. Providers wrap each
// message in framing tokens the text does not contain; these figures are
// those of OpenAI's chat format (3 framing tokens per message plus one for
// the role, 3 to prime the reply) and are close for the others. What they
// miss for a given provider the [Calibrator] learns.
const (
	// MessageOverhead is added once per message: framing and role.
	MessageOverhead = 4
	// toolCallOverhead is added per tool call of an assistant message, for
	// the call's framing beside its id, name and arguments.
	toolCallOverhead = 3
	// toolOverhead is added per tool schema offered, beside the tokens of
	// the schema's JSON.
	toolOverhead = 3
	// RequestOverhead is added once per request: the tokens that prime
	// the assistant's reply.
	RequestOverhead = 3
	// ImageFallback is the count for an image whose dimensions cannot be
	// read: the high-detail cost of a 1024×1024 image (85 + 4 × 170).
	ImageFallback = 765
)

// CountRequest counts the input tokens of req: every message (text parts,
// JSON parts, images, tool calls and call ids, each with its overhead) and
// every tool schema offered, plus [RequestOverhead]. req.System is counted
// only when it is not already the first message (BuildView puts it there).
// A nil req counts 0.
func CountRequest(c Counter, req *harness.Request) int {
	if req == nil {
		return 0
	}
	n := RequestOverhead
	if req.System != "" && !(len(req.Messages) > 0 && req.Messages[0].Role == harness.RoleSystem) {
		n += MessageOverhead + c.Count(req.System)
	}
	for i := range req.Messages {
		n += CountMessage(c, &req.Messages[i])
	}
	for _, t := range req.Tools {
		n += CountTool(c, t)
	}
	return n
}

// CountMessage counts one message with its [MessageOverhead].
func CountMessage(c Counter, m *harness.Message) int {
	n := MessageOverhead + CountParts(c, m.Parts)
	if m.ToolCallID != "" {
		n += c.Count(m.ToolCallID)
	}
	for _, tc := range m.ToolCalls {
		n += toolCallOverhead + c.Count(tc.ID) + c.Count(tc.Name) + c.Count(string(tc.Args))
	}
	return n
}

// CountParts counts content parts: text and JSON by their tokens, images
// by [ImageTokens].
func CountParts(c Counter, parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		switch p.Type {
		case harness.PartText:
			n += c.Count(p.Text)
		case harness.PartJSON:
			n += c.Count(string(p.JSON))
		case harness.PartImage:
			n += ImageTokens(p.Data)
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

// ImageTokens computes the tokens of an image at high detail by OpenAI's
// published rule: fit within 2048×2048, scale the shorter side down to 768,
// then 85 + 170 per 512-pixel tile. Images whose header cannot be decoded
// (PNG, JPEG and GIF are understood) count [ImageFallback].
func ImageTokens(data []byte) int {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return ImageFallback
	}
	w, h := float64(cfg.Width), float64(cfg.Height)
	if w > 2048 || h > 2048 {
		s := 2048 / max(w, h)
		w, h = w*s, h*s
	}
	if short := min(w, h); short > 768 {
		s := 768 / short
		w, h = w*s, h*s
	}
	tiles := ceilDiv(int(w+0.5), 512) * ceilDiv(int(h+0.5), 512)
	return 85 + 170*tiles
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentharness/harness"
)

// fromMessage maps a non-streamed reply: text blocks become text parts,
// tool_use blocks tool calls; thinking and server-tool blocks are not part
// of harness's conversation and are left out. A body that is not a message
// (an HTTP 200 carrying "{}", say) or whose usage is impossible is an error
// wrapping harness.ErrInvalidResponse, not an empty answer.
func fromMessage(msg *anthropic.Message) (*harness.Response, error) {
	if string(msg.Type) != "message" {
		return nil, fmt.Errorf("anthropic: %w: the reply is not a message (type %q)", harness.ErrInvalidResponse, string(msg.Type))
	}
	u, err := usage(msg.Usage.InputTokens, msg.Usage.CacheReadInputTokens, msg.Usage.CacheCreationInputTokens, msg.Usage.OutputTokens)
	if err != nil {
		return nil, err
	}
	out := harness.Message{Role: harness.RoleAssistant}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				out.Parts = append(out.Parts, harness.TextPart(b.Text))
			}
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			out.ToolCalls = append(out.ToolCalls, harness.ToolCall{ID: b.ID, Name: b.Name, Args: append(json.RawMessage(nil), args...)})
		}
	}
	return &harness.Response{Message: out, Usage: u, StopReason: string(msg.StopReason), Model: msg.Model}, nil
}

// usage maps the reported counts. The API's input_tokens excludes the
// cached part; harness's Input counts every prompt token. Each count is
// checked before the sum, so absurd counts cannot wrap it.
func usage(input, cacheRead, cacheWrite, output int64) (harness.Usage, error) {
	for _, c := range []struct {
		name string
		n    int64
	}{{"input_tokens", input}, {"cache_read_input_tokens", cacheRead}, {"cache_creation_input_tokens", cacheWrite}, {"output_tokens", output}} {
		if c.n < 0 || c.n > harness.MaxUsageTokens {
			return harness.Usage{}, fmt.Errorf("anthropic: %w: usage %s %d is outside 0..%d", harness.ErrInvalidResponse, c.name, c.n, int64(harness.MaxUsageTokens))
		}
	}
	u := harness.Usage{
		Input:      int(input + cacheRead + cacheWrite),
		Cached:     int(cacheRead),
		CacheWrite: int(cacheWrite),
		Output:     int(output),
	}
	if err := u.Validate(); err != nil {
		return harness.Usage{}, fmt.Errorf("anthropic: %w", err)
	}
	return u, nil
}

// accumulator rebuilds a streamed reply from its events.
type accumulator struct {
	blocks  []*block
	model   string
	stop    string
	input   int64
	read    int64
	write   int64
	output  int64
	started bool
	stopped bool
}

type block struct {
	typ      string
	text     strings.Builder
	id, name string
	input    string // from content_block_start
	partial  strings.Builder
	deltas   bool
}

// add folds an event in and returns the text it carries.
func (a *accumulator) add(ev anthropic.MessageStreamEventUnion) (string, error) {
	switch ev.Type {
	case "message_start":
		a.started = true
		u := ev.Message.Usage
		a.model = ev.Message.Model
		a.input, a.read, a.write, a.output = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens
	case "content_block_start":
		if ev.Index != int64(len(a.blocks)) {
			return "", fmt.Errorf("anthropic: stream: block %d started, expected %d", ev.Index, len(a.blocks))
		}
		cb := ev.ContentBlock
		b := &block{typ: cb.Type, id: cb.ID, name: cb.Name, input: cb.JSON.Input.Raw()}
		b.text.WriteString(cb.Text)
		a.blocks = append(a.blocks, b)
		return cb.Text, nil
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
			return "", fmt.Errorf("anthropic: stream: delta for unknown block %d", ev.Index)
		}
		b := a.blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			b.text.WriteString(ev.Delta.Text)
			return ev.Delta.Text, nil
		case "input_json_delta":
			b.deltas = true
			b.partial.WriteString(ev.Delta.PartialJSON)
		}
	case "message_delta":
		a.stop = string(ev.Delta.StopReason)
		u := ev.Usage
		// Counts here are totals for the message, not increments.
		a.output = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			a.input = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.read = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.write = u.CacheCreationInputTokens
		}
	case "message_stop":
		a.stopped = true
	}
	return "", nil
}

// response returns the reply the events built; a stream without
// message_start, or with impossible usage, is an error wrapping
// harness.ErrInvalidResponse.
func (a *accumulator) response() (*harness.Response, error) {
	if !a.started {
		return nil, fmt.Errorf("anthropic: %w: the stream has no message_start", harness.ErrInvalidResponse)
	}
	u, err := usage(a.input, a.read, a.write, a.output)
	if err != nil {
		return nil, err
	}
	out := harness.Message{Role: harness.RoleAssistant}
	for _, b := range a.blocks {
		switch b.typ {
		case "text":
			if b.text.Len() > 0 {
				out.Parts = append(out.Parts, harness.TextPart(b.text.String()))
			}
		case "tool_use":
			// The input arrives as JSON fragments that join to the
			// arguments; they are kept verbatim, valid or not.
			args := b.input
			if b.deltas {
				args = b.partial.String()
			}
			if args == "" || args == "null" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, harness.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)})
		}
	}
	return &harness.Response{Message: out, Usage: u, StopReason: a.stop, Model: a.model}, nil
}

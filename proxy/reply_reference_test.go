package proxy

// The reply parsers as they read answers before the wire structs moved to
// internal/wire: the reference TestReplyParsersMatchReference and
// FuzzReplyParsersMatchReference check the current ones against.

import (
	"encoding/json"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/openai"
)

// refAnthropicReply reads a Messages answer: message_start (input usage),
// content blocks (text, tool_use with streamed JSON input), message_delta
// (output usage), or the whole message.
type refAnthropicReply struct {
	r      reply
	blocks map[int]*refAnthropicBlock
	order  []int
}

type refAnthropicBlock struct {
	typ, id, name string
	text, input   strings.Builder
}

// refAnthropicUsage is the usage object of the Messages API.
type refAnthropicUsage struct {
	Input       int `json:"input_tokens"`
	CacheRead   int `json:"cache_read_input_tokens"`
	CacheCreate int `json:"cache_creation_input_tokens"`
	Output      int `json:"output_tokens"`
}

// add folds u in: the Messages API reports input at message_start and the
// cumulative output (sometimes input again) at message_delta.
func (p *refAnthropicReply) add(u *refAnthropicUsage) {
	if u == nil {
		return
	}
	p.r.Seen = true
	if in := u.Input + u.CacheRead + u.CacheCreate; in > 0 {
		// Input counts every prompt token, cached ones included.
		p.r.Usage.Input, p.r.Usage.Cached, p.r.Usage.CacheWrite = in, u.CacheRead, u.CacheCreate
	}
	if u.Output > 0 {
		p.r.Usage.Output = u.Output
	}
}

func (p *refAnthropicReply) event(name string, data []byte) {
	var ev struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message *struct {
			Usage *refAnthropicUsage `json:"usage"`
		} `json:"message"`
		Usage        *refAnthropicUsage `json:"usage"`
		ContentBlock *struct {
			Type, ID, Name, Text string
		} `json:"content_block"`
		Delta *struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			p.add(ev.Message.Usage)
		}
	case "message_delta":
		p.add(ev.Usage)
	case "content_block_start":
		if ev.ContentBlock != nil {
			b := &refAnthropicBlock{typ: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			b.text.WriteString(ev.ContentBlock.Text)
			p.blocks[ev.Index] = b
			p.order = append(p.order, ev.Index)
		}
	case "content_block_delta":
		if b := p.blocks[ev.Index]; b != nil && ev.Delta != nil {
			b.text.WriteString(ev.Delta.Text)
			b.input.WriteString(ev.Delta.PartialJSON)
		}
	}
}

func (p *refAnthropicReply) body(data []byte) {
	var msg struct {
		Content []struct {
			Type, ID, Name, Text string
			Input                json.RawMessage
		} `json:"content"`
		Usage *refAnthropicUsage `json:"usage"`
	}
	if json.Unmarshal(data, &msg) != nil {
		return
	}
	p.add(msg.Usage)
	for i, c := range msg.Content {
		b := &refAnthropicBlock{typ: c.Type, id: c.ID, name: c.Name}
		b.text.WriteString(c.Text)
		b.input.Write(c.Input)
		p.blocks[i] = b
		p.order = append(p.order, i)
	}
}

func (p *refAnthropicReply) reply() reply {
	r := p.r
	var texts []string
	for _, i := range p.order {
		b := p.blocks[i]
		switch b.typ {
		case "text":
			texts = append(texts, b.text.String())
		case "tool_use":
			args := b.input.String()
			if args == "" {
				args = "{}"
			}
			r.Calls = append(r.Calls, harness.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)})
		}
	}
	r.Text = textOf(texts)
	r.Seen = r.Seen || len(p.order) > 0
	return r
}

// refChatReply reads a Chat Completions answer: the chunks of a stream
// (content and tool-call deltas by index, usage in the last chunk when the
// client asked for it) or the whole completion.
type refChatReply struct {
	r     reply
	text  strings.Builder
	calls map[int]*refChatCall
	order []int
}

type refChatCall struct {
	id, name string
	args     strings.Builder
}

type refChatToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type refChatChoice struct {
	Delta   *refChatMessage `json:"delta"`
	Message *refChatMessage `json:"message"`
}

type refChatMessage struct {
	Content   *string           `json:"content"`
	ToolCalls []refChatToolCall `json:"tool_calls"`
}

type refChatChunk struct {
	Choices []refChatChoice   `json:"choices"`
	Usage   *openai.ChatUsage `json:"usage"`
}

func (p *refChatReply) add(c *refChatChunk) {
	if c.Usage != nil {
		p.r.Seen = true
		p.r.Usage = c.Usage.Usage()
	}
	for _, ch := range c.Choices {
		m := ch.Delta
		if m == nil {
			m = ch.Message
		}
		if m == nil {
			continue
		}
		p.r.Seen = true
		if m.Content != nil {
			p.text.WriteString(*m.Content)
		}
		for i, tc := range m.ToolCalls {
			idx := tc.Index
			if ch.Message != nil {
				idx = i // a whole message's calls carry no index
			}
			call := p.calls[idx]
			if call == nil {
				call = &refChatCall{}
				p.calls[idx] = call
				p.order = append(p.order, idx)
			}
			if tc.ID != "" {
				call.id = tc.ID
			}
			call.name += tc.Function.Name
			call.args.WriteString(tc.Function.Arguments)
		}
	}
}

func (p *refChatReply) event(name string, data []byte) {
	var c refChatChunk
	if json.Unmarshal(data, &c) == nil {
		p.add(&c)
	}
}

func (p *refChatReply) body(data []byte) { p.event("", data) }

func (p *refChatReply) reply() reply {
	r := p.r
	r.Text = p.text.String()
	for _, i := range p.order {
		c := p.calls[i]
		r.Calls = append(r.Calls, harness.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args.String())})
	}
	return r
}

// refResponsesReply reads a Responses answer: the items of
// response.output_item.done events and the usage of response.completed,
// or the whole response object.
type refResponsesReply struct {
	r     reply
	items int
}

type refResponsesItemJSON struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type refResponsesUsage struct {
	Input   int `json:"input_tokens"`
	Details struct {
		Cached int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	Output int `json:"output_tokens"`
}

type refResponsesObject struct {
	ID     string                 `json:"id"`
	Output []refResponsesItemJSON `json:"output"`
	Usage  *refResponsesUsage     `json:"usage"`
}

func (p *refResponsesReply) addItem(it refResponsesItemJSON) {
	p.items++
	switch it.Type {
	case "message":
		for _, c := range it.Content {
			if c.Type == "output_text" {
				p.r.Text = joinInput(p.r.Text, c.Text)
			}
		}
	case "function_call":
		p.r.Calls = append(p.r.Calls, harness.ToolCall{ID: it.CallID, Name: it.Name, Args: json.RawMessage(it.Arguments)})
	case "custom_tool_call":
		p.r.Calls = append(p.r.Calls, harness.ToolCall{ID: it.CallID, Name: it.Name, Args: json.RawMessage(encodeString(it.Input))})
	}
}

func (p *refResponsesReply) addUsage(u *refResponsesUsage) {
	if u == nil {
		return
	}
	p.r.Seen = true
	p.r.Usage = harness.Usage{Input: u.Input, Cached: u.Details.Cached, Output: u.Output}
}

func (p *refResponsesReply) event(name string, data []byte) {
	var ev struct {
		Type     string                `json:"type"`
		Item     *refResponsesItemJSON `json:"item"`
		Response *refResponsesObject   `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Response != nil && ev.Response.ID != "" {
		p.r.ID = ev.Response.ID
	}
	switch ev.Type {
	case "response.output_item.done":
		if ev.Item != nil {
			p.addItem(*ev.Item)
		}
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response == nil {
			return
		}
		if p.items == 0 {
			for _, it := range ev.Response.Output {
				p.addItem(it)
			}
		}
		p.addUsage(ev.Response.Usage)
	}
}

func (p *refResponsesReply) body(data []byte) {
	var obj refResponsesObject
	if json.Unmarshal(data, &obj) != nil {
		return
	}
	p.r.ID = obj.ID
	for _, it := range obj.Output {
		p.addItem(it)
	}
	p.addUsage(obj.Usage)
}

func (p *refResponsesReply) reply() reply {
	r := p.r
	r.Seen = r.Seen || p.items > 0
	return r
}

// refChatCalls is chatCalls as it read an assistant message's tool_calls.
func refChatCalls(body []byte, fs []field) []harness.ToolCall {
	tc, ok := get(fs, "tool_calls")
	if !ok || kind(body, tc) != '[' {
		return nil
	}
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(body[tc.Start:tc.End], &calls) != nil {
		return nil
	}
	out := make([]harness.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = harness.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)}
	}
	return out
}

package proxy

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/openai"
)

// chatFormat is OpenAI Chat Completions (POST /v1/chat/completions), what
// most SDK-based agents and OpenAI-compatible servers speak. A tool result
// is a role "tool" message; its "content" is what the proxy may replace,
// with a string.
type chatFormat struct{}

func (chatFormat) name() string { return "openai-chat" }

func (chatFormat) cacheLifetime(body []byte) time.Duration { return openAILifetime(body) }

func (chatFormat) historyKey() string { return "messages" }

func (chatFormat) top(body []byte, top []field, req *request) error {
	if req.histStart == 0 {
		return jsonErr(0, "no messages")
	}
	req.Model, req.Stream = fieldStr(body, top, "model"), boolField(body, top, "stream")
	if s, ok := get(top, "tools"); ok {
		req.Tools, req.toolsAt = raw(body, s), s
	}
	var system []string
	for _, it := range req.Items {
		if it.Kind == itemSystem {
			system = append(system, it.Text)
		}
	}
	if len(system) > 0 {
		req.System = json.RawMessage(encodeString(strings.Join(system, "\n\n")))
	}
	return nil
}

func (chatFormat) elem(body []byte, e span, req *request) error {
	fs, err := objectFields(body, e)
	if err != nil {
		return err
	}
	content, _ := get(fs, "content")
	switch fieldStr(body, fs, "role") {
	case "system", "developer":
		t, _ := contentText(body, content, "text")
		req.Items = append(req.Items, item{Kind: itemSystem, Text: t})
	case "user":
		t, _ := contentText(body, content, "text")
		req.Items = append(req.Items, item{Kind: itemUser, Text: t})
	case "assistant":
		t, _ := contentText(body, content, "text")
		req.Items = append(req.Items, item{Kind: itemAssistant, Text: t, Calls: chatCalls(body, fs)})
	case "tool":
		// A tool message has no error flag: the client's error text is
		// its content.
		r := &parsedResult{CallID: fieldStr(body, fs, "tool_call_id"), Encode: encodeString, Content: content, NoErrorFlag: true}
		r.Decode = func(body []byte) (string, bool) { return contentText(body, content, "text") }
		if content.End == 0 {
			r.Decode = noText
		}
		req.Items = append(req.Items, item{Kind: itemResult, Result: r})
	}
	return nil
}

// offeredTools reads a Chat Completions tools array: function tools, each
// its "function" object. opencode (an OpenAI-compatible provider, the AI
// SDK's Chat Completions client) sends its MCP tools here as it does on
// the other APIs, named SERVER_TOOL with a closed schema; no client is
// known to send MCP tools here under a prefix, so only opencode's rule
// applies and under the prefix rule every tool stays whole. A strict tool
// is never stubbed.
func (chatFormat) offeredTools(body []byte, s span, rule mcpRule) ([]offeredTool, bool, error) {
	elems, err := arrayElems(body, s)
	if err != nil {
		return nil, false, err
	}
	var out []offeredTool
	for _, e := range elems {
		fs, err := objectFields(body, e)
		if err != nil {
			return nil, false, err
		}
		fn, ok := get(fs, "function")
		if fieldStr(body, fs, "type") != "function" || !ok || kind(body, fn) != '{' {
			continue
		}
		ffs, err := objectFields(body, fn)
		if err != nil {
			return nil, false, err
		}
		schema, ok := get(ffs, "parameters")
		if !ok {
			continue
		}
		name := fieldStr(body, ffs, "name")
		mcp := rule == opencodeRule && opencodeMCP(body, name, schema) && !boolField(body, ffs, "strict")
		out = append(out, functionTool(body, ffs, name, schema, mcp))
	}
	return out, false, nil
}

// chatCalls reads an assistant message's tool_calls: none when they do
// not decode, or when a call's arguments are not a JSON string.
func chatCalls(body []byte, fs []field) []harness.ToolCall {
	tc, ok := get(fs, "tool_calls")
	if !ok || kind(body, tc) != '[' {
		return nil
	}
	var calls []openai.ToolCall
	if json.Unmarshal(body[tc.Start:tc.End], &calls) != nil {
		return nil
	}
	out := make([]harness.ToolCall, len(calls))
	for i, c := range calls {
		args, ok := openai.String(c.Function.Arguments)
		if !ok {
			return nil
		}
		out[i] = harness.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(args)}
	}
	return out
}

// chatReply reads a Chat Completions answer: the chunks of a stream
// (content and tool-call deltas by index, usage in the last chunk when the
// client asked for it) or the whole completion.
type chatReply struct {
	r     reply
	text  strings.Builder
	calls map[int]*chatCall
	order []int
}

type chatCall struct {
	id, name string
	args     strings.Builder
}

func (chatFormat) newReply() replyParser { return &chatReply{calls: map[int]*chatCall{}} }

// add folds chunk c in; a chunk with a call whose arguments are not a
// JSON string is left out whole, as one that does not decode.
func (p *chatReply) add(c *openai.ChatChunk) {
	for _, ch := range c.Choices {
		for _, m := range []*openai.ChatAnswer{ch.Delta, ch.Message} {
			for _, tc := range answerCalls(m) {
				if _, ok := openai.String(tc.Function.Arguments); !ok {
					return
				}
			}
		}
	}
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
				call = &chatCall{}
				p.calls[idx] = call
				p.order = append(p.order, idx)
			}
			if tc.ID != "" {
				call.id = tc.ID
			}
			call.name += tc.Function.Name
			args, _ := openai.String(tc.Function.Arguments)
			call.args.WriteString(args)
		}
	}
}

func answerCalls(m *openai.ChatAnswer) []openai.ToolCall {
	if m == nil {
		return nil
	}
	return m.ToolCalls
}

func (p *chatReply) event(name string, data []byte) {
	var c openai.ChatChunk
	if json.Unmarshal(data, &c) == nil {
		p.add(&c)
	}
}

func (p *chatReply) body(data []byte) { p.event("", data) }

func (p *chatReply) reply() reply {
	r := p.r
	r.Text = p.text.String()
	for _, i := range p.order {
		c := p.calls[i]
		r.Calls = append(r.Calls, harness.ToolCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args.String())})
	}
	return r
}

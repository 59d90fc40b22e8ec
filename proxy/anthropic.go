package proxy

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/anthropic"
)

// anthropicFormat is the Anthropic Messages API (POST /v1/messages):
// Claude Code, opencode with @ai-sdk/anthropic, the Anthropic SDKs. A tool
// result is a tool_result block of a user message; its "content" (a string
// or an array of blocks) is what the proxy may replace, with a string.
type anthropicFormat struct{}

func (anthropicFormat) name() string { return "anthropic" }

func (anthropicFormat) cacheLifetime(body []byte) time.Duration { return anthropicLifetime(body) }

func (anthropicFormat) historyKey() string { return "messages" }

func (anthropicFormat) top(body []byte, top []field, req *request) error {
	if req.histStart == 0 {
		return jsonErr(0, "no messages")
	}
	req.Model, req.Stream = fieldStr(body, top, "model"), boolField(body, top, "stream")
	if s, ok := get(top, "system"); ok {
		req.System = raw(body, s)
		t, _ := contentText(body, s, "text")
		req.Seed = [][]byte{[]byte(t)}
	}
	if s, ok := get(top, "tools"); ok {
		req.Tools, req.toolsAt = raw(body, s), s
	}
	if s, ok := get(top, "metadata"); ok {
		if fs, err := objectFields(body, s); err == nil {
			req.Session = claudeCodeSession(fieldStr(body, fs, "user_id"))
		}
	}
	return nil
}

// claudeCodeSession returns the session id in a Claude Code request's
// metadata.user_id, "" when it holds none: Claude Code 2.x sends a JSON
// object with "session_id"; 1.x sent "user_<hash>_account_<uuid>_session_<uuid>".
// The id stays the same when a session is resumed (claude --continue).
func claudeCodeSession(userID string) string {
	var v struct {
		SessionID string `json:"session_id"`
	}
	if strings.HasPrefix(userID, "{") && json.Unmarshal([]byte(userID), &v) == nil {
		return v.SessionID
	}
	if _, id, ok := strings.Cut(userID, "_session_"); ok {
		return id
	}
	return ""
}

func (anthropicFormat) elem(body []byte, e span, req *request) error {
	fs, err := objectFields(body, e)
	if err != nil {
		return err
	}
	role := fieldStr(body, fs, "role")
	if role != "user" && role != "assistant" {
		return nil // Claude Code's role "system" notes are not turns
	}
	content, _ := get(fs, "content")
	return anthropicMessage(body, role, content, req)
}

// anthropicMessage appends the items of one message.
func anthropicMessage(body []byte, role string, content span, req *request) error {
	if kind(body, content) == '"' {
		req.Items = append(req.Items, anthropicText(role, str(body, content), nil))
		return nil
	}
	blocks, err := arrayElems(body, content)
	if err != nil {
		return err
	}
	var texts []string
	var calls []harness.ToolCall
	results := false
	for _, bl := range blocks {
		fs, err := objectFields(body, bl)
		if err != nil {
			return err
		}
		switch fieldStr(body, fs, "type") {
		case "text":
			texts = append(texts, fieldStr(body, fs, "text"))
		case "tool_use", "server_tool_use":
			in, _ := get(fs, "input")
			calls = append(calls, harness.ToolCall{ID: fieldStr(body, fs, "id"), Name: fieldStr(body, fs, "name"), Args: ownRaw(body, in)})
		case "tool_result":
			results = true
			req.Items = append(req.Items, item{Kind: itemResult, Result: anthropicResult(body, fs)})
		}
	}
	if results && role == "user" {
		// Text beside results (a client's reminder) is not a new turn.
		return nil
	}
	if role == "assistant" {
		req.Items = append(req.Items, item{Kind: itemAssistant, Text: textOf(texts), Calls: calls})
		return nil
	}
	// Claude Code sends its reminders (the date, CLAUDE.md) as blocks of
	// the prompt's message: the turn's context.
	req.Items = append(req.Items, userItem(texts, clientctx.ClaudeCode))
	return nil
}

func anthropicText(role, text string, calls []harness.ToolCall) item {
	if role == "assistant" {
		return item{Kind: itemAssistant, Text: text, Calls: calls}
	}
	return item{Kind: itemUser, Text: text}
}

func anthropicResult(body []byte, fs []field) *parsedResult {
	r := &parsedResult{CallID: fieldStr(body, fs, "tool_use_id"), IsError: boolField(body, fs, "is_error"), Encode: encodeString}
	c, ok := get(fs, "content")
	if !ok {
		// No content: nothing to bound, and no span to replace.
		r.Decode = noText
		return r
	}
	r.Content = c
	r.Decode = func(body []byte) (string, bool) { return contentText(body, c, "text") }
	return r
}

// anthropicReply reads a Messages answer: message_start (input usage),
// content blocks (text, tool_use with streamed JSON input), message_delta
// (output usage), or the whole message.
type anthropicReply struct {
	r      reply
	blocks map[int]*anthropicBlock
	order  []int
}

type anthropicBlock struct {
	typ, id, name string
	text, input   strings.Builder
}

func (anthropicFormat) newReply() replyParser {
	return &anthropicReply{blocks: map[int]*anthropicBlock{}}
}

// add folds u in: the Messages API reports input at message_start and the
// cumulative output (sometimes input again) at message_delta.
func (p *anthropicReply) add(u *anthropic.Usage) {
	if u == nil {
		return
	}
	p.r.Seen = true
	w := u.Usage()
	if w.Input > 0 {
		p.r.Usage.Input, p.r.Usage.Cached, p.r.Usage.CacheWrite = w.Input, w.Cached, w.CacheWrite
	}
	if w.Output > 0 {
		p.r.Usage.Output = w.Output
	}
}

func (p *anthropicReply) event(name string, data []byte) {
	var ev anthropic.StreamEvent
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
			b := &anthropicBlock{typ: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
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

func (p *anthropicReply) body(data []byte) {
	var msg anthropic.Response
	if json.Unmarshal(data, &msg) != nil {
		return
	}
	p.add(msg.Usage)
	for i, c := range msg.Content {
		b := &anthropicBlock{typ: c.Type, id: c.ID, name: c.Name}
		b.text.WriteString(c.Text)
		b.input.Write(c.Input)
		p.blocks[i] = b
		p.order = append(p.order, i)
	}
}

func (p *anthropicReply) reply() reply {
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

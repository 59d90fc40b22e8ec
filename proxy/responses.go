package proxy

import (
	"encoding/json"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/openai"
)

// responsesFormat is the OpenAI Responses API (POST /v1/responses), the
// only wire format Codex speaks. A tool result is a function_call_output
// (or custom_tool_call_output) item of "input"; its "output" is what the
// proxy may replace, with a string. The request's prompt_cache_key, when
// set (Codex sets its session id), is the conversation key.
type responsesFormat struct{}

func (responsesFormat) name() string { return "openai-responses" }

func (responsesFormat) cacheLifetime(body []byte) time.Duration { return openAILifetime(body) }

func (responsesFormat) historyKey() string { return "input" }

func (responsesFormat) top(body []byte, top []field, req *request) error {
	req.Model, req.Stream = fieldStr(body, top, "model"), boolField(body, top, "stream")
	req.Key = fieldStr(body, top, "prompt_cache_key")
	req.PrevResponse = fieldStr(body, top, "previous_response_id")
	req.Stored = upstreamConversation(body, top)
	if s, ok := get(top, "instructions"); ok {
		req.System = raw(body, s)
		req.Seed = [][]byte{[]byte(str(body, s))}
	}
	if s, ok := get(top, "tools"); ok {
		req.Tools, req.toolsAt = raw(body, s), s
	}
	if in, ok := get(top, "input"); ok && kind(body, in) == '"' {
		req.Items = []item{{Kind: itemUser, Text: str(body, in)}}
		return nil
	}
	if req.histStart == 0 {
		return jsonErr(0, "no input")
	}
	return nil
}

func (responsesFormat) elem(body []byte, e span, req *request) error {
	fs, err := objectFields(body, e)
	if err != nil {
		return err
	}
	if it, ok := responsesItem(body, fs); ok {
		if role := fieldStr(body, fs, "role"); it.Kind == itemUser && (role == "developer" || role == "system") {
			it.Kind = itemSystem
		} else if it.Kind == itemUser && clientctx.Codex(role, it.Text) {
			// Codex sends its instructions, environment and skills as
			// user messages of their own: the turn's context.
			it.Pieces = []piece{{Text: it.Text, Context: true}}
		}
		req.Items = append(req.Items, it)
	}
	return nil
}

// responsesItem reads one input item; ok is false for items that are
// not part of the transcript (reasoning, developer messages).
func responsesItem(body []byte, fs []field) (item, bool) {
	typ := fieldStr(body, fs, "type")
	switch typ {
	case "", "message":
		content, _ := get(fs, "content")
		text, _ := contentText(body, content, "input_text", "output_text", "text")
		switch fieldStr(body, fs, "role") {
		case "user", "developer", "system":
			return item{Kind: itemUser, Text: text}, true
		case "assistant":
			return item{Kind: itemAssistant, Text: text}, true
		}
	case "function_call", "custom_tool_call":
		args, ok := get(fs, "arguments")
		a := json.RawMessage(str(body, args))
		if !ok {
			in, _ := get(fs, "input")
			a = json.RawMessage(encodeString(str(body, in)))
		}
		name := fieldStr(body, fs, "name")
		if ns := fieldStr(body, fs, "namespace"); ns != "" {
			// Codex calls a tool of an MCP server's namespace tool by
			// the namespace and the tool's name: NAMESPACE__tool is the
			// tool's full name (as Claude Code's mcp__SERVER__TOOL).
			name = ns + "__" + name
		}
		return item{Kind: itemAssistant, Calls: []harness.ToolCall{{ID: fieldStr(body, fs, "call_id"), Name: name, Args: a}}}, true
	case "function_call_output", "custom_tool_call_output":
		r := &parsedResult{CallID: fieldStr(body, fs, "call_id"), Encode: encodeString, NoErrorFlag: true}
		out, ok := get(fs, "output")
		if !ok {
			r.Decode = noText
		} else {
			r.Content = out
			r.Decode = func(body []byte) (string, bool) { return contentText(body, out, "input_text", "output_text", "text") }
		}
		return item{Kind: itemResult, Result: r}, true
	}
	return item{}, false
}

// responsesReply reads a Responses answer: the items of
// response.output_item.done events and the usage of response.completed,
// or the whole response object.
type responsesReply struct {
	r     reply
	items int
}

func (responsesFormat) newReply() replyParser { return &responsesReply{} }

// outputItem is an answer's item as the reply reads it: its text parts,
// and a call's arguments and a custom tool's input as the strings they
// are.
type outputItem struct {
	openai.Item
	parts       []openai.ContentPart
	args, input string
}

// readItems reads items; ok is false when one does not have the shape
// the reply reads (content parts, string arguments and input), which
// leaves the event or body they came in out whole, as one that does not
// decode.
func readItems(items []openai.Item) (out []outputItem, ok bool) {
	out = make([]outputItem, len(items))
	for i, it := range items {
		o := outputItem{Item: it}
		if len(it.Content) > 0 && json.Unmarshal(it.Content, &o.parts) != nil {
			return nil, false
		}
		var okA, okI bool
		o.args, okA = openai.String(it.Arguments)
		o.input, okI = openai.String(it.Input)
		if !okA || !okI {
			return nil, false
		}
		out[i] = o
	}
	return out, true
}

func (p *responsesReply) addItem(it outputItem) {
	p.items++
	switch it.Type {
	case "message":
		for _, c := range it.parts {
			if c.Type == "output_text" {
				p.r.Text = joinInput(p.r.Text, c.Text)
			}
		}
	case "function_call":
		p.r.Calls = append(p.r.Calls, harness.ToolCall{ID: it.CallID, Name: it.Name, Args: json.RawMessage(it.args)})
	case "custom_tool_call":
		p.r.Calls = append(p.r.Calls, harness.ToolCall{ID: it.CallID, Name: it.Name, Args: json.RawMessage(encodeString(it.input))})
	}
}

func (p *responsesReply) addUsage(u *openai.ResponsesUsage) {
	if u == nil {
		return
	}
	p.r.Seen = true
	p.r.Usage = u.Usage()
}

func (p *responsesReply) event(name string, data []byte) {
	var ev openai.ResponsesEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Response != nil && ev.Response.ID != "" {
		p.r.ID = ev.Response.ID
	}
	var item, output []outputItem
	ok := true
	if ev.Item != nil {
		item, ok = readItems([]openai.Item{*ev.Item})
	}
	if ev.Response != nil && ok {
		output, ok = readItems(ev.Response.Output)
	}
	if !ok {
		return
	}
	switch ev.Type {
	case "response.output_item.done":
		if ev.Item != nil {
			p.addItem(item[0])
		}
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response == nil {
			return
		}
		if p.items == 0 {
			for _, it := range output {
				p.addItem(it)
			}
		}
		p.addUsage(ev.Response.Usage)
	}
}

func (p *responsesReply) body(data []byte) {
	var obj openai.Response
	if json.Unmarshal(data, &obj) != nil {
		return
	}
	p.r.ID = obj.ID
	output, ok := readItems(obj.Output)
	if !ok {
		return
	}
	for _, it := range output {
		p.addItem(it)
	}
	p.addUsage(obj.Usage)
}

func (p *responsesReply) reply() reply {
	r := p.r
	r.Seen = r.Seen || p.items > 0
	return r
}

// upstreamConversation is the id of the upstream conversation a Responses
// request adds to: its "conversation", a string or an object's "id".
func upstreamConversation(body []byte, top []field) string {
	c, ok := get(top, "conversation")
	if !ok {
		return ""
	}
	if kind(body, c) == '{' {
		fs, err := objectFields(body, c)
		if err != nil {
			return ""
		}
		return fieldStr(body, fs, "id")
	}
	return str(body, c)
}

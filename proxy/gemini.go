package proxy

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wire/gemini"
)

// geminiFormat is the Gemini API (POST …/models/M:generateContent and
// :streamGenerateContent?alt=sse), Gemini CLI's. A tool result is a
// functionResponse part; the string under its response's "output" (or
// "error") is what the proxy may replace. Calls without an id are matched
// to their responses by function name, as the API does.
type geminiFormat struct{}

func (geminiFormat) name() string { return "gemini" }

// cacheLifetime is 0: Gemini documents no lifetime of its implicit cache.
func (geminiFormat) cacheLifetime([]byte) time.Duration { return 0 }

func (geminiFormat) historyKey() string { return "contents" }

// sessionContext: Gemini CLI opens a session with its <session_context>
// (the date, the system, the workspace and its files), whose lasting
// lines key the conversation in place of the system prompt (see
// conversationID).
func (geminiFormat) sessionContext() {}

func (geminiFormat) top(body []byte, top []field, req *request) error {
	if req.histStart == 0 {
		return jsonErr(0, "no contents")
	}
	if s, ok := get(top, "systemInstruction"); ok {
		req.System = raw(body, s)
		if fs, err := objectFields(body, s); err == nil {
			if ps, ok := get(fs, "parts"); ok {
				t, _ := textBlocks(body, ps)
				req.Seed = [][]byte{[]byte(t)}
			}
		}
	}
	if s, ok := get(top, "tools"); ok {
		req.Tools, req.toolsAt = raw(body, s), s
	}
	return nil
}

func (geminiFormat) elem(body []byte, e span, req *request) error {
	fs, err := objectFields(body, e)
	if err != nil {
		return err
	}
	parts, _ := get(fs, "parts")
	return geminiContent(body, fieldStr(body, fs, "role"), parts, req)
}

// geminiContent appends the items of one content entry.
func geminiContent(body []byte, role string, parts span, req *request) error {
	elems, err := arrayElems(body, parts)
	if err != nil {
		return err
	}
	var texts []string
	var calls []harness.ToolCall
	results := false
	for _, e := range elems {
		fs, err := objectFields(body, e)
		if err != nil {
			return err
		}
		if fc, ok := get(fs, "functionCall"); ok {
			ffs, err := objectFields(body, fc)
			if err != nil {
				return err
			}
			args, _ := get(ffs, "args")
			calls = append(calls, harness.ToolCall{ID: geminiID(body, ffs), Name: fieldStr(body, ffs, "name"), Args: ownRaw(body, args)})
			continue
		}
		if fr, ok := get(fs, "functionResponse"); ok {
			ffs, err := objectFields(body, fr)
			if err != nil {
				return err
			}
			results = true
			req.Items = append(req.Items, item{Kind: itemResult, Result: geminiResult(body, ffs)})
			continue
		}
		if t, ok := get(fs, "text"); ok && !boolField(body, fs, "thought") {
			texts = append(texts, str(body, t))
		}
	}
	switch {
	case role == "model":
		req.Items = append(req.Items, item{Kind: itemAssistant, Text: textOf(texts), Calls: calls})
	case !results:
		// Gemini CLI sends its session and editor context as parts
		// beside the prompt, or as contents of their own: the turn's
		// context.
		req.Items = append(req.Items, userItem(texts, clientctx.Gemini))
	}
	return nil
}

func geminiID(body []byte, fs []field) string {
	if id := fieldStr(body, fs, "id"); id != "" {
		return id
	}
	return fieldStr(body, fs, "name")
}

func geminiResult(body []byte, fs []field) *parsedResult {
	r := &parsedResult{CallID: geminiID(body, fs), Encode: encodeString}
	r.Decode = noText
	resp, ok := get(fs, "response")
	if !ok {
		return r
	}
	rfs, err := objectFields(body, resp)
	if err != nil {
		return r
	}
	for _, key := range []string{"output", "error"} {
		if s, ok := get(rfs, key); ok && kind(body, s) == '"' {
			r.Content, r.IsError = s, key == "error"
			r.Decode = func(body []byte) (string, bool) { return str(body, s), true }
			return r
		}
	}
	return r
}

// geminiModel reads the model from a request path
// (…/models/gemini-x:streamGenerateContent).
func geminiModel(path string) string {
	_, after, ok := strings.Cut(path, "/models/")
	if !ok {
		return ""
	}
	m, _, _ := strings.Cut(after, ":")
	return m
}

// geminiReply reads a Gemini answer: the candidates' parts and the usage
// metadata of each chunk (the last one holds the totals), or a whole
// response (or an array of them).
type geminiReply struct {
	r    reply
	text strings.Builder
}

func (geminiFormat) newReply() replyParser { return &geminiReply{} }

func (p *geminiReply) add(c *gemini.Response) {
	if u := c.Usage; u != nil {
		p.r.Seen = true
		p.r.Usage = harness.Usage{Input: u.Prompt, Cached: u.Cached, Output: u.Candidates + u.Thoughts}
	}
	for _, cand := range c.Candidates {
		for _, part := range cand.Content.Parts {
			p.r.Seen = true
			if fc := part.FunctionCall; fc != nil {
				id := fc.ID
				if id == "" {
					id = fc.Name
				}
				p.r.Calls = append(p.r.Calls, harness.ToolCall{ID: id, Name: fc.Name, Args: fc.Args})
			} else if !part.Thought {
				p.text.WriteString(part.Text)
			}
		}
	}
}

func (p *geminiReply) event(name string, data []byte) {
	var c gemini.Response
	if json.Unmarshal(data, &c) == nil {
		p.add(&c)
	}
}

func (p *geminiReply) body(data []byte) {
	var list []gemini.Response
	if json.Unmarshal(data, &list) == nil {
		for i := range list {
			p.add(&list[i])
		}
		return
	}
	p.event("", data)
}

func (p *geminiReply) reply() reply {
	r := p.r
	r.Text = p.text.String()
	return r
}

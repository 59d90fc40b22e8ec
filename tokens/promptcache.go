package tokens

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agentharness/harness"
)

// PromptCache models a provider's prompt cache over the requests of one
// conversation, in order: a request's input is counted as [CountRequest]
// does, and its cached part is the prefix it shares with the previous
// request — the tool schemas when the same list is sent again, then every
// message identical to the one at the same position, up to the first that
// differs. Providers cache whole blocks, so a message that changed breaks
// the cache at its start, and a request that sends tools after one that
// sent none (or the reverse) shares nothing. The scripted model, the
// replay and the bench all count with it, so their figures agree.
//
// A PromptCache is not safe for concurrent use; each conversation needs
// its own.
type PromptCache struct {
	counter Counter

	prevTools    []harness.ToolSpec
	prevToolToks int // the tokens of prevTools
	prevKey      string
	prevHadTools bool
	prevMsgs     []harness.Message
	prevCounts   []int
}

// NewPromptCache returns an empty cache counting with c.
func NewPromptCache(c Counter) *PromptCache { return &PromptCache{counter: c} }

// Count is what a request cost against a PromptCache.
type Count struct {
	// Input counts the whole request; Cached the part of it the cache
	// served.
	Input, Cached int
	// ToolTokens counts the tool schemas sent (part of Input).
	ToolTokens int
	// Messages counts each message of the request, in order.
	Messages []int
}

// Usage returns the count as usage, with output tokens added.
func (c Count) Usage(output int) harness.Usage {
	return harness.Usage{Input: c.Input, Cached: c.Cached, Output: output}
}

// Add counts req as the next request of the conversation and remembers it
// as the prefix for the one after. req.System is counted only when it is
// not already the first message, as CountRequest does.
func (p *PromptCache) Add(req *harness.Request) Count {
	c := Count{Input: RequestOverhead}
	prefix := true
	hasTools := len(req.Tools) > 0
	key := ""
	if hasTools {
		if sameSlice(req.Tools, p.prevTools) {
			// The turn's list again: counted when first sent.
			c.ToolTokens = p.prevToolToks
		} else {
			for _, t := range req.Tools {
				c.ToolTokens += CountTool(p.counter, t)
			}
		}
		c.Input += c.ToolTokens
		key = p.toolsKey(req.Tools)
		if p.prevHadTools && p.prevKey == key {
			c.Cached += c.ToolTokens
		} else {
			prefix = false
		}
	} else if p.prevHadTools {
		prefix = false
	}
	if req.System != "" && !(len(req.Messages) > 0 && req.Messages[0].Role == harness.RoleSystem) {
		// A system prompt outside the messages: not cached, as the
		// messages after it cannot tell whether it changed.
		c.Input += MessageOverhead + p.counter.Count(req.System)
		prefix = false
	}
	c.Messages = make([]int, len(req.Messages))
	for i := range req.Messages {
		m := &req.Messages[i]
		if prefix && i < len(p.prevMsgs) && SameMessage(m, &p.prevMsgs[i]) {
			c.Messages[i] = p.prevCounts[i]
			c.Cached += c.Messages[i]
		} else {
			prefix = false
			c.Messages[i] = CountMessage(p.counter, m)
		}
		c.Input += c.Messages[i]
	}
	p.prevMsgs, p.prevCounts = req.Messages, c.Messages
	p.prevHadTools, p.prevKey = hasTools, key
	if hasTools {
		p.prevTools, p.prevToolToks = req.Tools, c.ToolTokens
	}
	return c
}

// toolsKey serializes a tool list, reusing the previous key when the list
// is the same slice (requests of one turn share it).
func (p *PromptCache) toolsKey(tools []harness.ToolSpec) string {
	if p.prevKey != "" && sameSlice(tools, p.prevTools) {
		return p.prevKey
	}
	return ToolsKey(tools)
}

// sameSlice reports whether a and b are the same slice of schemas.
func sameSlice(a, b []harness.ToolSpec) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// ToolsKey is the serialization of a tool list a prompt cache compares:
// the JSON of every schema, or, for a schema that is not valid JSON, its
// name, description and schema bytes.
func ToolsKey(tools []harness.ToolSpec) string {
	b, err := json.Marshal(tools)
	if err != nil {
		// A schema that is not valid JSON still has a deterministic form.
		var buf []byte
		for _, t := range tools {
			buf = append(buf, t.Name...)
			buf = append(buf, 0)
			buf = append(buf, t.Description...)
			buf = append(buf, 0)
			buf = append(buf, t.InputSchema...)
			buf = append(buf, 0)
		}
		return string(buf)
	}
	return string(b)
}

// SameMessage reports whether a provider would serialize a and b alike
// (role, ids, parts, calls), without serializing them: parts or calls that
// are the same memory are equal without being read, and comparing strings
// returns at once for strings that share memory, the common case for
// views rebuilt from one transcript.
func SameMessage(a, b *harness.Message) bool {
	if a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName || a.IsError != b.IsError ||
		len(a.Parts) != len(b.Parts) || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	// Parts or calls that are the same memory (a view rebuilt from the
	// transcript shows its stored ones) are equal without being read.
	if len(a.Parts) > 0 && &a.Parts[0] != &b.Parts[0] {
		for i := range a.Parts {
			p, q := &a.Parts[i], &b.Parts[i]
			if p.Type != q.Type || p.MIMEType != q.MIMEType || p.Text != q.Text ||
				!bytes.Equal(p.JSON, q.JSON) || !bytes.Equal(p.Data, q.Data) {
				return false
			}
		}
	}
	if len(a.ToolCalls) > 0 && &a.ToolCalls[0] != &b.ToolCalls[0] {
		for i := range a.ToolCalls {
			p, q := &a.ToolCalls[i], &b.ToolCalls[i]
			if p.ID != q.ID || p.Name != q.Name || !bytes.Equal(p.Args, q.Args) {
				return false
			}
		}
	}
	return true
}

// A request is serialized, for prompt-cache accounting, as a sequence of
// units: the tool schemas offered (one unit, sent before the messages, as
// providers place them), then each message. AppendUnit writes a message's
// unit: role, tool-call id and name, error flag, every part (type, media
// type, text, JSON, image bytes) and every tool call (id, name, arguments
// as the model sent them), each length-prefixed so that two different
// messages never serialize alike. Two requests share a cached prefix of k
// units when their first k units are byte-identical; [SameMessage] is the
// fast equivalent a PromptCache uses, and the tests check it against
// this serialization.
func AppendUnit(b []byte, m *harness.Message) []byte {
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	str(string(m.Role))
	str(m.ToolCallID)
	str(m.ToolName)
	b = strconv.AppendBool(b, m.IsError)
	b = strconv.AppendInt(b, int64(len(m.Parts)), 10)
	for _, p := range m.Parts {
		str(string(p.Type))
		str(p.MIMEType)
		str(p.Text)
		str(string(p.JSON))
		str(string(p.Data))
	}
	b = strconv.AppendInt(b, int64(len(m.ToolCalls)), 10)
	for _, tc := range m.ToolCalls {
		str(tc.ID)
		str(tc.Name)
		str(string(tc.Args))
	}
	return b
}

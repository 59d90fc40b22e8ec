package tokens

import (
	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
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
	c := Count{Input: promptunit.RequestOverhead}
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
		c.Input += promptunit.MessageOverhead + p.counter.Count(req.System)
		prefix = false
	}
	c.Messages = make([]int, len(req.Messages))
	for i := range req.Messages {
		m := &req.Messages[i]
		if prefix && i < len(p.prevMsgs) && promptunit.SameMessage(m, &p.prevMsgs[i]) {
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
	return promptunit.ToolsKey(tools)
}

// sameSlice reports whether a and b are the same slice of schemas.
func sameSlice(a, b []harness.ToolSpec) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

package anthropic

import "github.com/anthropics/anthropic-sdk-go/v2"

// setBreakpoints marks the stable prefix for the prompt cache (the API
// allows four breakpoints; three are used):
//
//  1. the end of the system prompt, which also covers the tools before it
//     (the last tool when there is no system prompt);
//  2. the end of the previous request's messages: the message two before
//     the last, since a round adds an assistant message and the user
//     message of its results. Its cache entry was written by that request,
//     so this request reads it even when the round added more content
//     blocks than the API's lookback from the last breakpoint (20);
//  3. the end of this request, written for the next one.
func setBreakpoints(p *anthropic.MessageNewParams) {
	cc := anthropic.NewCacheControlEphemeralParam()
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = cc
	} else if n := len(p.Tools); n > 0 && p.Tools[n-1].OfTool != nil {
		p.Tools[n-1].OfTool.CacheControl = cc
	}
	n := len(p.Messages)
	if n >= 3 {
		markLast(p.Messages[n-3])
	}
	if n >= 1 {
		markLast(p.Messages[n-1])
	}
}

// markLast puts a breakpoint on the last content block of a message.
func markLast(m anthropic.MessageParam) {
	var blocks []anthropic.ContentBlockParamUnion
	switch {
	case m.OfUser != nil:
		blocks = m.OfUser.Content
	case m.OfAssistant != nil:
		blocks = m.OfAssistant.Content
	}
	if len(blocks) == 0 {
		return
	}
	if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
		*cc = anthropic.NewCacheControlEphemeralParam()
	}
}

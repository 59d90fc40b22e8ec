package tokens_test

import (
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

func TestPromptCache(t *testing.T) {
	words := tokens.CounterFunc(func(s string) int { return len(s) })
	tool := []harness.ToolSpec{{Name: "read", Description: "read a file"}}
	other := []harness.ToolSpec{{Name: "grep", Description: "search"}}
	sys := harness.Message{Role: harness.RoleSystem, Parts: []harness.Part{harness.TextPart("be brief")}}
	user := harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("hello")}}
	reply := harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("hi")}}
	changed := harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("HELLO")}}
	count := func(ms ...harness.Message) int {
		n := 0
		for i := range ms {
			n += tokens.CountMessage(words, &ms[i])
		}
		return n
	}
	toolTokens := tokens.CountTool(words, tool[0])
	p := tokens.NewPromptCache(words)
	for _, tc := range []struct {
		name       string
		req        *harness.Request
		wantCached int
	}{
		{"first request: nothing cached", &harness.Request{Tools: tool, Messages: []harness.Message{sys, user}}, 0},
		{"same tools and prefix", &harness.Request{Tools: tool, Messages: []harness.Message{sys, user, reply}}, toolTokens + count(sys, user)},
		{"a changed message breaks the prefix at its start", &harness.Request{Tools: tool, Messages: []harness.Message{sys, changed, reply}}, toolTokens + count(sys)},
		{"other tools share nothing", &harness.Request{Tools: other, Messages: []harness.Message{sys, changed, reply}}, 0},
		{"no tools after tools share nothing", &harness.Request{Messages: []harness.Message{sys, changed, reply}}, 0},
		{"no tools after no tools share the messages", &harness.Request{Messages: []harness.Message{sys, changed}}, count(sys, changed)},
	} {
		c := p.Add(tc.req)
		if c.Cached != tc.wantCached {
			t.Errorf("%s: cached %d, want %d", tc.name, c.Cached, tc.wantCached)
		}
		if want := tokens.CountRequest(words, tc.req); c.Input != want {
			t.Errorf("%s: input %d, CountRequest %d", tc.name, c.Input, want)
		}
	}
}

// Package openai holds the OpenAI Chat Completions wire structs that both
// the proxy (reading answers) and the importers (reading recorded chat
// messages) decode.
package openai

import "github.com/agentharness/harness"

// ChatUsage is a chat completion's usage: the prompt's tokens (cached ones
// included), the cached part of them and the completion's.
type ChatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// Usage returns u as harness counts it (nil: zero).
func (u *ChatUsage) Usage() harness.Usage {
	if u == nil {
		return harness.Usage{}
	}
	out := harness.Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.Cached = u.PromptTokensDetails.CachedTokens
	}
	return out
}

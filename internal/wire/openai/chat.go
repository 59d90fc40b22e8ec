package openai

import (
	"encoding/json"

	"github.com/agentharness/harness"
)

// ChatMessage is one Chat Completions message as sent or recorded: its
// Content is a string, null, or a list of ContentParts; an assistant's
// carries its ToolCalls, a tool message the ToolCallID it answers.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []ToolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

// ContentPart is one part of a message's content: text (type text, or
// Responses' input_text and output_text) or an image by URL.
type ContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// ToolCall is one call of an assistant message, or a piece of one in a
// streamed chunk (the pieces of one call share its Index).
type ToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function a ToolCall calls: its name and arguments,
// a JSON string holding the arguments object (a piece of it in a chunk);
// some recorders store the object itself.
type FunctionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ChatChunk is a chunk of a streamed answer or a whole completion: its
// choices and, in a stream's last chunk when the client asked for it, the
// usage.
type ChatChunk struct {
	Choices []ChatChoice `json:"choices"`
	Usage   *ChatUsage   `json:"usage"`
}

// ChatChoice is one choice of an answer: a chunk's Delta or a whole
// completion's Message.
type ChatChoice struct {
	Delta   *ChatAnswer `json:"delta"`
	Message *ChatAnswer `json:"message"`
}

// ChatAnswer is what a choice adds: text and tool calls.
type ChatAnswer struct {
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

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

package openai

import (
	"encoding/json"

	"github.com/agentharness/harness"
)

// Item is one item of a Responses request's input or an answer's output
// (and of a Codex rollout's response_item lines): a message (Role, Content
// as ContentParts), a function_call (Name, CallID, Arguments: a JSON
// string), a custom_tool_call (Input: a string), a local_shell_call
// (Action), an output answering a CallID (Output: a string, an object or
// content parts), reasoning.
type Item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
}

// ResponsesEvent is one event of a streamed Responses answer: its type,
// the item of response.output_item.done, the response of
// response.completed (or .incomplete, .failed).
type ResponsesEvent struct {
	Type     string    `json:"type"`
	Item     *Item     `json:"item"`
	Response *Response `json:"response"`
}

// Response is a whole Responses answer, or the response of a stream's
// response.completed (or .incomplete, .failed) event: its output items
// and usage.
type Response struct {
	// ID names the response; a later request continues it by this id
	// (previous_response_id).
	ID     string          `json:"id"`
	Output []Item          `json:"output"`
	Usage  *ResponsesUsage `json:"usage"`
}

// ResponsesUsage is a Responses answer's usage: the input's tokens (cached
// ones included), the cached part of them and the output's.
type ResponsesUsage struct {
	Input   int `json:"input_tokens"`
	Details struct {
		Cached int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	Output int `json:"output_tokens"`
}

// Usage returns u as harness counts it.
func (u *ResponsesUsage) Usage() harness.Usage {
	return harness.Usage{Input: u.Input, Cached: u.Details.Cached, Output: u.Output}
}

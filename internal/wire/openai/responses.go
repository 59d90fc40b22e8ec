package openai

import "encoding/json"

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

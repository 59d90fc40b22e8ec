// Package anthropic holds the Anthropic Messages API's wire structs that
// both the proxy (reading answers, streamed or whole) and the importers
// (reading Claude Code sessions, which record the API's messages) decode:
// a message and its content blocks, an answer's stream events and usage.
// The proxy reads requests in place (it edits their bytes), not through
// these structs.
package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
)

// Message is one message as sent or recorded: its Content is a string or
// a list of blocks (see Content).
type Message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *Usage          `json:"usage"`
}

// Block is one content block: text, tool_use (and server_tool_use) with
// its input, tool_result answering a tool_use id with its content (a
// string or blocks) and error flag, image with its source, tool_reference
// naming a tool, thinking.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *ImageSource    `json:"source"`
}

// ImageSource is an image block's base64 data and its media type.
type ImageSource struct {
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// Content reads a message's (or a tool_result's) content: a string, or a
// list of blocks; null or nothing is neither.
func Content(raw json.RawMessage) ([]Block, string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, s, nil
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, "", fmt.Errorf("content is neither a string nor a list of content blocks")
	}
	return blocks, "", nil
}

// Usage is an answer's usage: input_tokens excludes the cached part
// (cache_read_input_tokens) and the part written to the cache
// (cache_creation_input_tokens).
type Usage struct {
	Input       int `json:"input_tokens"`
	CacheRead   int `json:"cache_read_input_tokens"`
	CacheCreate int `json:"cache_creation_input_tokens"`
	Output      int `json:"output_tokens"`
}

// Usage returns u as harness counts it, Input counting every prompt token
// (nil: zero).
func (u *Usage) Usage() harness.Usage {
	if u == nil {
		return harness.Usage{}
	}
	return harness.Usage{Input: u.Input + u.CacheCreate + u.CacheRead, Cached: u.CacheRead, CacheWrite: u.CacheCreate, Output: u.Output}
}

package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wire/anthropic"
	"github.com/agentharness/harness/internal/wire/openai"
)

// formatAnthropic names a message list in the Anthropic Messages API's
// shape: content blocks, tool_use in the assistant's messages and
// tool_result in the user's, as loops built on Anthropic's SDK log their
// requests' messages.
const formatAnthropic = "anthropic-messages"

// anthropicBlocks returns content's blocks when it is a list of Anthropic
// Messages API content blocks, told from OpenAI's content parts by a block
// only Anthropic has (tool_use, tool_result, image, thinking, document).
func anthropicBlocks(content json.RawMessage) ([]anthropic.Block, bool) {
	if len(content) == 0 || content[0] != '[' {
		return nil, false
	}
	blocks, _, err := anthropic.Content(content)
	if err != nil {
		return nil, false
	}
	for _, b := range blocks {
		switch b.Type {
		case "tool_use", "server_tool_use", "tool_result", "image", "document", "thinking", "redacted_thinking":
			return blocks, true
		}
	}
	return nil, false
}

// addBlocks adds message m, found at v, whose content is Anthropic content
// blocks: an assistant's text and tool_use blocks are its message and
// calls (its thinking left out, counted); a user's tool_result blocks
// answer those calls, and its text, if any, is the next turn's input (its
// images and documents left out, counted).
func (b *chatBuilder) addBlocks(v rawValue, path string, m *chatMessage, blocks []anthropic.Block) error {
	switch m.Role {
	case "assistant":
		var parts []harness.Part
		for i, blk := range blocks {
			switch blk.Type {
			case "text":
				parts = append(parts, harness.TextPart(blk.Text))
			case "thinking", "redacted_thinking":
				b.thinking++
			case "tool_use", "server_tool_use":
				m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: blk.ID, Type: "function", Function: openai.FunctionCall{Name: blk.Name, Arguments: compactJSON(blk.Input)}})
			default:
				return b.src.errAt(v.off, fmt.Sprintf("%s.content[%d].type", path, i), fmt.Sprintf("content block of unknown type %q in an assistant message", blk.Type), nil)
			}
		}
		return b.addAssistant(v, path, m, parts)
	case "user":
		var texts []string
		for i, blk := range blocks {
			switch blk.Type {
			case "tool_result":
				parts, err := ccResultParts(blk.Content)
				if err != nil {
					return b.src.errAt(v.off, fmt.Sprintf("%s.content[%d].content", path, i), err.Error(), nil)
				}
				r, err := b.addResult(v, fmt.Sprintf("%s.content[%d].tool_use_id", path, i), blk.ToolUseID, harness.Message{Parts: parts}.Text(), parts)
				if err != nil {
					return err
				}
				r.IsError = blk.IsError
			case "text":
				texts = append(texts, blk.Text)
			case "image", "document":
				b.images++
			default:
				return b.src.errAt(v.off, fmt.Sprintf("%s.content[%d].type", path, i), fmt.Sprintf("content block of unknown type %q in a user message", blk.Type), nil)
			}
		}
		if len(texts) > 0 {
			b.rec.Turns = append(b.rec.Turns, &Turn{Input: strings.Join(texts, "\n\n")})
		}
		return nil
	}
	return b.src.errAt(v.off, path+".role", fmt.Sprintf("role %q with Anthropic content blocks (want user or assistant)", m.Role), nil)
}

// blockWarnings are what an Anthropic message list left out, as warnings.
func (b *chatBuilder) blockWarnings() []string {
	var w []string
	if b.thinking > 0 {
		w = append(w, fmt.Sprintf("%d thinking blocks left out (the API drops earlier turns' thinking from the input)", b.thinking))
	}
	if b.images > 0 {
		w = append(w, fmt.Sprintf("%d images and documents in user messages left out", b.images))
	}
	return w
}

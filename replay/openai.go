package replay

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness/internal/wire/anthropic"
)

// parseOpenAI imports a plain chat-message list: a JSON array of
// messages, an object {"messages": [...]} (the fine-tuning layout, or a
// request body whose "system" and "tools" are read too), or JSONL with
// one message per line. Roles system (or developer), user, assistant and
// tool are understood, and messages whose content is Anthropic Messages
// API blocks (tool_use, tool_result: addBlocks); an assistant message may
// carry the usage of its response as "usage" (OpenAI's prompt_tokens …
// or Anthropic's input_tokens …). Every user message with text starts a
// turn.
func parseOpenAI(name string, data []byte) (*Recording, error) {
	src := &source{name: name, data: data}
	b := newChatBuilder(src, formatOpenAI)
	start := skipSpace(data, 0)
	switch {
	case start < int64(len(data)) && data[start] == '[':
		elems, err := src.arrayElems(0, data, "")
		if err != nil {
			return nil, err
		}
		for i, v := range elems {
			if err := b.add(v, fmt.Sprintf("[%d]", i)); err != nil {
				return nil, err
			}
		}
	case start < int64(len(data)) && data[start] == '{' && !isJSONL(data):
		fields, err := src.objectFields(0, data, "")
		if err != nil {
			return nil, err
		}
		msgs, ok := fields["messages"]
		if !ok {
			return nil, src.errAt(start, "", `not a chat-message list: an object without "messages"`, nil)
		}
		if err := b.requestFields(fields); err != nil {
			return nil, err
		}
		elems, err := src.arrayElems(msgs.off, msgs.raw, "messages")
		if err != nil {
			return nil, err
		}
		for i, v := range elems {
			if err := b.add(v, fmt.Sprintf("messages[%d]", i)); err != nil {
				return nil, err
			}
		}
	default:
		if err := parseJSONL(src, b); err != nil {
			return nil, err
		}
	}
	if len(b.rec.Turns) == 0 {
		return nil, src.errAt(0, "", "no user or assistant message", nil)
	}
	b.rec.ID = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if b.rec.Format == formatAnthropic {
		if w := notRecorded(formatAnthropic, b.rec.System == "", len(b.rec.Tools) == 0); w != "" {
			b.rec.Warnings = append([]string{w}, b.rec.Warnings...)
		}
		b.rec.Warnings = append(b.rec.Warnings, b.blockWarnings()...)
	}
	return b.rec, nil
}

// requestFields reads what a request body beside its "messages" says of
// every request: Anthropic's top-level "system" (a string or text blocks)
// and "tools" in any shape ParseToolSpecs reads.
func (b *chatBuilder) requestFields(fields map[string]rawValue) error {
	if sys, ok := fields["system"]; ok {
		blocks, text, err := anthropic.Content(sys.raw)
		if err != nil {
			return b.src.errAt(sys.off, "system", err.Error(), nil)
		}
		texts := []string{text}
		if blocks != nil {
			texts = texts[:0]
		}
		for _, blk := range blocks {
			texts = append(texts, blk.Text)
		}
		b.rec.System = strings.Join(texts, "\n\n")
	}
	if tools, ok := fields["tools"]; ok {
		specs, err := ParseToolSpecs(tools.raw)
		if err != nil {
			return b.src.errAt(tools.off, "tools", err.Error(), nil)
		}
		b.rec.Tools = specs
	}
	return nil
}

// isJSONL reports whether data holds more than one JSON value on separate
// lines (a JSON object spanning lines is one value).
func isJSONL(data []byte) bool {
	first, rest, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
	first = bytes.TrimSpace(first)
	return len(rest) > 0 && len(first) > 1 && first[len(first)-1] == '}' && bytes.HasPrefix(bytes.TrimSpace(rest), []byte("{"))
}

// parseJSONL adds one message per non-blank line (see records: a last
// line cut off mid-write is left out, with a warning).
func parseJSONL(src *source, b *chatBuilder) error {
	partial, err := records(src)(b.add)
	if err != nil {
		return err
	}
	if partial {
		b.rec.Warnings = append(b.rec.Warnings, "the last line is incomplete (the file was still being written): left out")
	}
	return nil
}

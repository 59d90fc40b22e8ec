package replay

import (
	"bytes"
	"encoding/json"
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
	elems, paths, partial, err := chatElems(src, b)
	if err != nil {
		return nil, err
	}
	if responsesItems(elems) {
		return parseResponses(src, elems, paths, b.rec, partial)
	}
	for i, v := range elems {
		if err := b.add(v, paths[i]); err != nil {
			return nil, err
		}
	}
	if partial {
		b.rec.Warnings = append(b.rec.Warnings, incompleteLine("file"))
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

// chatElems lists the messages (or Responses input items) of a chat list,
// with the path of each: the elements of a JSON array, of an object's
// "messages" or "input" (a request body: its "system", "instructions" and
// "tools" go to b's recording), or the lines of JSONL (partial: the last
// line was cut off mid-write and left out).
func chatElems(src *source, b *chatBuilder) (elems []rawValue, paths []string, partial bool, err error) {
	data := src.data
	start := skipSpace(data, 0)
	switch {
	case start < int64(len(data)) && data[start] == '[':
		elems, err = src.arrayElems(0, data, "")
		for i := range elems {
			paths = append(paths, fmt.Sprintf("[%d]", i))
		}
		return elems, paths, false, err
	case start < int64(len(data)) && data[start] == '{' && !isJSONL(data):
		fields, err := src.objectFields(0, data, "")
		if err != nil {
			return nil, nil, false, err
		}
		key := "messages"
		msgs, ok := fields[key]
		if !ok {
			key = "input"
			if msgs, ok = fields[key]; !ok {
				return nil, nil, false, src.errAt(start, "", `not a chat-message list: an object without "messages" or "input"`, nil)
			}
		}
		b.requestFields(fields)
		if s := skipSpace(msgs.raw, 0); s < int64(len(msgs.raw)) && msgs.raw[s] == '"' {
			// A Responses request whose input is one user message.
			item, _ := json.Marshal(map[string]json.RawMessage{"role": json.RawMessage(`"user"`), "content": msgs.raw})
			return []rawValue{{raw: item, off: msgs.off}}, []string{key}, false, nil
		}
		elems, err = src.arrayElems(msgs.off, msgs.raw, key)
		for i := range elems {
			paths = append(paths, fmt.Sprintf("%s[%d]", key, i))
		}
		return elems, paths, false, err
	}
	partial, err = records(src)(func(v rawValue, path string) error {
		elems, paths = append(elems, v), append(paths, path)
		return nil
	})
	return elems, paths, partial, err
}

// requestFields reads what a request body beside its messages says of
// every request: its "model", Anthropic's top-level "system" (a string or
// text blocks), the Responses API's "instructions", and "tools" in any
// shape ParseToolSpecs reads. What it cannot read is left out, with a
// warning.
func (b *chatBuilder) requestFields(fields map[string]rawValue) {
	if m, ok := fields["model"]; ok {
		json.Unmarshal(m.raw, &b.rec.Model) // a model that is not a string names none
	}
	for _, key := range []string{"system", "instructions"} {
		sys, ok := fields[key]
		if !ok {
			continue
		}
		blocks, text, err := anthropic.Content(sys.raw)
		if err != nil {
			b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf("%q: %v: left out", key, err))
			continue
		}
		if blocks != nil {
			var texts []string
			for _, blk := range blocks {
				texts = append(texts, blk.Text)
			}
			text = strings.Join(texts, "\n\n")
		}
		b.rec.System = text
	}
	if tools, ok := fields["tools"]; ok {
		specs, err := ParseToolSpecs(b.namedTools(tools.raw))
		if err != nil {
			b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf("\"tools\": %v: left out, so the figures leave out the tool schemas", err))
			return
		}
		b.rec.Tools = specs
	}
}

// isJSONL reports whether data holds more than one JSON value on separate
// lines (a JSON object spanning lines is one value).
func isJSONL(data []byte) bool {
	first, rest, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
	first = bytes.TrimSpace(first)
	return len(rest) > 0 && len(first) > 1 && first[len(first)-1] == '}' && bytes.HasPrefix(bytes.TrimSpace(rest), []byte("{"))
}

// namedTools is a request body's tools without the provider's built-in
// tools (web_search, code_interpreter …: a type and no name or schema),
// counted in a warning: the provider adds their definitions itself.
func (b *chatBuilder) namedTools(raw json.RawMessage) json.RawMessage {
	var all []map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return raw // ParseToolSpecs says what is wrong
	}
	named := all[:0]
	var builtin []string
	for _, t := range all {
		_, name := t["name"]
		_, fn := t["function"]
		if name || fn {
			named = append(named, t)
			continue
		}
		builtin = append(builtin, jsonString(t["type"]))
	}
	if len(builtin) == 0 {
		return raw
	}
	b.rec.Warnings = append(b.rec.Warnings, fmt.Sprintf("%d built-in tools of the provider (%s) carry no schema in the request: left out", len(builtin), strings.Join(builtin, ", ")))
	out, _ := json.Marshal(named)
	return out
}

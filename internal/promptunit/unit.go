// Package promptunit holds what the prompt-cache accounting of tokens and
// its callers (policies, replays, the bench) share: how a request is cut
// into the units a provider's cache compares, and the fixed token
// overheads of the chat wire formats.
package promptunit

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agentharness/harness"
)

// ToolsKey is the serialization of a tool list a prompt cache compares:
// the JSON of every schema, or, for a schema that is not valid JSON, its
// name, description and schema bytes.
func ToolsKey(tools []harness.ToolSpec) string {
	b, err := json.Marshal(tools)
	if err != nil {
		// A schema that is not valid JSON still has a deterministic form.
		var buf []byte
		for _, t := range tools {
			buf = append(buf, t.Name...)
			buf = append(buf, 0)
			buf = append(buf, t.Description...)
			buf = append(buf, 0)
			buf = append(buf, t.InputSchema...)
			buf = append(buf, 0)
		}
		return string(buf)
	}
	return string(b)
}

// SameMessage reports whether a provider would serialize a and b alike
// (role, ids, parts, calls), without serializing them: parts or calls that
// are the same memory are equal without being read, and comparing strings
// returns at once for strings that share memory, the common case for
// views rebuilt from one transcript.
func SameMessage(a, b *harness.Message) bool {
	if a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName || a.IsError != b.IsError ||
		len(a.Parts) != len(b.Parts) || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	// Parts or calls that are the same memory (a view rebuilt from the
	// transcript shows its stored ones) are equal without being read.
	if len(a.Parts) > 0 && &a.Parts[0] != &b.Parts[0] {
		for i := range a.Parts {
			p, q := &a.Parts[i], &b.Parts[i]
			if p.Type != q.Type || p.MIMEType != q.MIMEType || p.Text != q.Text ||
				!bytes.Equal(p.JSON, q.JSON) || !bytes.Equal(p.Data, q.Data) {
				return false
			}
		}
	}
	if len(a.ToolCalls) > 0 && &a.ToolCalls[0] != &b.ToolCalls[0] {
		for i := range a.ToolCalls {
			p, q := &a.ToolCalls[i], &b.ToolCalls[i]
			if p.ID != q.ID || p.Name != q.Name || !bytes.Equal(p.Args, q.Args) {
				return false
			}
		}
	}
	return true
}

// A request is serialized, for prompt-cache accounting, as a sequence of
// units: the tool schemas offered (one unit, sent before the messages, as
// providers place them), then each message. AppendUnit writes a message's
// unit: role, tool-call id and name, error flag, every part (type, media
// type, text, JSON, image bytes) and every tool call (id, name, arguments
// as the model sent them), each length-prefixed so that two different
// messages never serialize alike. Two requests share a cached prefix of k
// units when their first k units are byte-identical; [SameMessage] is the
// fast equivalent tokens.PromptCache uses, and the tests check it against
// this serialization.
func AppendUnit(b []byte, m *harness.Message) []byte {
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	str(string(m.Role))
	str(m.ToolCallID)
	str(m.ToolName)
	b = strconv.AppendBool(b, m.IsError)
	b = strconv.AppendInt(b, int64(len(m.Parts)), 10)
	for _, p := range m.Parts {
		str(string(p.Type))
		str(p.MIMEType)
		str(p.Text)
		str(string(p.JSON))
		str(string(p.Data))
	}
	b = strconv.AppendInt(b, int64(len(m.ToolCalls)), 10)
	for _, tc := range m.ToolCalls {
		str(tc.ID)
		str(tc.Name)
		str(string(tc.Args))
	}
	return b
}

package toolselect

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// stubDescriptionRunes bounds a stub's description: the first sentence of
// the tool's, which is what a model needs to know the tool exists and
// what it is for.
const stubDescriptionRunes = 120

// firstTurn is a deferring selector's choice (Selector.Defer): the
// selection the conversation's first turn made on its own, worked out
// again from its input (the store keeps no tool lists), on every turn.
func (s *Selector) firstTurn(ctx context.Context, conv *harness.Conversation, tools toolSet, now fresh) ([]bool, string, error) {
	if conv == nil || len(conv.Turns) < 2 {
		return now.sel, modeRanked, nil
	}
	f, err := s.freshOf(ctx, &harness.Conversation{ID: conv.ID}, conv.Turns[0].Input, tools)
	if err != nil {
		return nil, "", err
	}
	return f.sel, modeDeferred, nil
}

// Stub returns the short form of a deferred tool (Selector.Defer): its
// name, the first sentence of its description, and an input schema that
// names its top-level parameters, with their JSON type where the schema
// gives one and the required list, and nothing else (no descriptions,
// enums, nested objects or formats). A model can call the tool from it;
// the engine checks the arguments against the full schema and, when they
// do not fit, answers with an error result that carries the full schema
// (harness.Engine's argument check), so one more round at most teaches
// the model the rest. The stub of a spec is the same bytes every time it
// is made, so a list holding it keeps its cached prefix.
func Stub(t harness.ToolSpec) harness.ToolSpec {
	return harness.ToolSpec{Name: t.Name, Description: firstSentence(t.Description), InputSchema: stubSchema(t.InputSchema), Risk: t.Risk}
}

// Shortened reports whether shown, a tool as a selection offered it, is
// a short form of full (a Stub) rather than full itself: its description
// or its input schema differ.
func Shortened(shown, full harness.ToolSpec) bool {
	return shown.Description != full.Description || !bytes.Equal(shown.InputSchema, full.InputSchema)
}

// firstSentence cuts s at its first sentence end or line break, within
// stubDescriptionRunes (an ellipsis marks a cut inside a sentence).
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	if i := strings.IndexAny(s, "\n\r"); i >= 0 {
		end = i
	}
	if i := strings.Index(s[:end], ". "); i >= 0 {
		end = i + 1
	}
	out := strings.TrimSpace(s[:end])
	if utf8.RuneCountInString(out) <= stubDescriptionRunes {
		return out
	}
	r := []rune(out)
	return strings.TrimSpace(string(r[:stubDescriptionRunes-1])) + "…"
}

// stubSchema keeps an object schema's top-level property names (in the
// schema's own order), each property's "type" when it is a string or an
// array of strings, and "required". Anything it cannot read as an object
// schema becomes the schema of any object.
func stubSchema(raw json.RawMessage) json.RawMessage {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &top) != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	names, types := orderedProperties(top.Properties)
	var b bytes.Buffer
	b.WriteString(`{"type":"object"`)
	if len(names) > 0 {
		b.WriteString(`,"properties":{`)
		for i, n := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(&b, n)
			b.WriteByte(':')
			if types[i] != nil {
				b.WriteString(`{"type":`)
				b.Write(types[i])
				b.WriteByte('}')
			} else {
				b.WriteString(`{}`)
			}
		}
		b.WriteByte('}')
	}
	if req := knownNames(top.Required, names); len(req) > 0 {
		b.WriteString(`,"required":`)
		writeJSON(&b, req)
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

// orderedProperties reads a "properties" object's keys in their order,
// with each property's compacted "type" when it is a string or an array
// of strings (nil otherwise).
func orderedProperties(raw json.RawMessage) (names []string, types []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names, types
		}
		name, _ := tok.(string)
		var prop struct {
			Type json.RawMessage `json:"type"`
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return names, types
		}
		names = append(names, name)
		if json.Unmarshal(val, &prop) != nil || !simpleType(prop.Type) {
			types = append(types, nil)
			continue
		}
		var c bytes.Buffer
		if json.Compact(&c, prop.Type) != nil {
			types = append(types, nil)
			continue
		}
		types = append(types, c.Bytes())
	}
	return names, types
}

// simpleType reports whether a "type" value is a string or an array of
// strings, the two forms JSON Schema allows.
func simpleType(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s != ""
	}
	var ss []string
	return json.Unmarshal(raw, &ss) == nil && len(ss) > 0
}

// knownNames keeps the required names that are properties, in order.
func knownNames(req, names []string) []string {
	var out []string
	for _, r := range req {
		for _, n := range names {
			if r == n {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

func writeJSON(b *bytes.Buffer, v any) {
	enc, _ := json.Marshal(v) // strings and string slices always marshal
	b.Write(enc)
}

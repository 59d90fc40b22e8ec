package proxy

import (
	"encoding/json"
	"time"

	"github.com/agentharness/harness"
)

// wireFormat is one provider API the proxy speaks: it reads a request body
// into history items and parses the upstream's answer for the store and
// /stats. It never writes a request: the proxy splices the encoded model
// copies into the client's bytes.
type wireFormat interface {
	// name names the format in /stats and on stderr.
	name() string
	// elemFormat reads a request body (see walkBody); a body it cannot
	// read is not this format's request, and the proxy forwards it
	// unchanged.
	elemFormat
	// newReply returns a parser of one upstream answer.
	newReply() replyParser
	// cacheLifetime is how long the upstream keeps the prompt cache of
	// the request body (see cachelife.go): after a longer pause it has
	// surely expired. 0 means the format documents none, and the proxy
	// never assumes it expired.
	cacheLifetime(body []byte) time.Duration
}

// replyParser reads one upstream answer: the events of a stream, or a
// whole JSON body. It never fails: what it cannot read it leaves out.
type replyParser interface {
	// event takes one server-sent event (name may be empty).
	event(name string, data []byte)
	// body takes a whole JSON answer.
	body(data []byte)
	// reply returns what the answer held.
	reply() reply
}

// reply is what the proxy keeps of an upstream answer.
type reply struct {
	// ID is the answer's id where the format has one (the Responses API's
	// response id, which a later request may continue by).
	ID    string
	Usage harness.Usage
	Text  string
	Calls []harness.ToolCall
	// Seen is set once the parser found a usage report or content.
	Seen bool
}

// str returns the string at s, or "" when the value is not a string.
func str(b []byte, s span) string {
	if kind(b, s) != '"' {
		return ""
	}
	v, err := unquote(b[s.Start:s.End])
	if err != nil {
		return ""
	}
	return v
}

// fieldStr returns the string member key of fs.
func fieldStr(b []byte, fs []field, key string) string {
	s, ok := get(fs, key)
	if !ok {
		return ""
	}
	return str(b, s)
}

// raw returns the bytes of s (nil for an empty span).
func raw(b []byte, s span) json.RawMessage {
	if s.End <= s.Start {
		return nil
	}
	return json.RawMessage(b[s.Start:s.End])
}

// ownRaw returns a copy of the bytes of s (nil for an empty span): what
// a parse keeps beyond its request, as a call's arguments, must not hold
// the body, which later requests would otherwise keep alive.
func ownRaw(b []byte, s span) json.RawMessage {
	if s.End <= s.Start {
		return nil
	}
	return append(json.RawMessage(nil), b[s.Start:s.End]...)
}

// noText is the Decode of a result without text content.
func noText([]byte) (string, bool) { return "", false }

// encodeString is the model copy as a JSON string, the form every format
// accepts for a tool result's content.
func encodeString(text string) []byte {
	out, _ := json.Marshal(text) // a string always marshals
	return out
}

// textBlocks reads an array of content blocks that are all
// {"type": textType, "text": …} (any block, with no textTypes); ok is false
// when any block is something else (an image), or the value is not an
// array.
func textBlocks(b []byte, s span, textTypes ...string) (string, bool) {
	elems, err := arrayElems(b, s)
	if err != nil {
		return "", false
	}
	texts := make([]string, 0, len(elems))
	for _, e := range elems {
		fs, err := objectFields(b, e)
		if err != nil {
			return "", false
		}
		t := fieldStr(b, fs, "type")
		okType := len(textTypes) == 0 // Gemini's parts carry no type
		for _, want := range textTypes {
			okType = okType || t == want
		}
		if !okType {
			return "", false
		}
		texts = append(texts, fieldStr(b, fs, "text"))
	}
	return textOf(texts), true
}

// contentText reads a content value that is a string or an array of text
// blocks.
func contentText(b []byte, s span, textTypes ...string) (string, bool) {
	switch kind(b, s) {
	case '"':
		return str(b, s), true
	case '[':
		return textBlocks(b, s, textTypes...)
	case 0, 'n':
		return "", true
	}
	return "", false
}

// topFields reads the body's top-level object: one pass over the body,
// which checks the structure of every member as it skips it.
func topFields(body []byte) ([]field, error) {
	start := skipWS(body, 0)
	if start >= len(body) || body[start] != '{' {
		return nil, jsonErr(start, "want an object")
	}
	fs, end, err := objectFieldsEnd(body, span{start, len(body)})
	if err != nil {
		return nil, err
	}
	if t := skipWS(body, end); t != len(body) {
		return nil, jsonErr(t, "data after the JSON value")
	}
	return fs, nil
}

// boolField reports whether member key of fs is true.
func boolField(b []byte, fs []field, key string) bool {
	s, ok := get(fs, key)
	return ok && kind(b, s) == 't'
}

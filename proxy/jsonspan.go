package proxy

import (
	"bytes"
	"errors"
	"fmt"
)

// The proxy rewrites a request by splicing new bytes over the byte spans of
// a few JSON values (tool results' contents) and copies every other byte as
// the client sent it, so unknown fields, key order, number formatting and
// whitespace reach the upstream unchanged. This file finds those spans: a
// small scanner that walks a JSON document without building it, checking
// its structure as it goes (the upstream would refuse what it rejects).

// span is the half-open byte range [Start, End) of one JSON value.
type span struct{ Start, End int }

// field is one member of a JSON object: its key (unescaped) and the span
// of its value.
type field struct {
	Key   string
	Value span
}

// errJSON reports malformed JSON at an offset.
var errJSON = errors.New("malformed JSON")

func jsonErr(off int, what string) error {
	return fmt.Errorf("%w at byte %d: %s", errJSON, off, what)
}

// maxDepth bounds nesting, so a hostile body cannot exhaust the stack.
const maxDepth = 512

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the end of the value starting at b[i] (after any
// leading whitespace) and the value's start.
func skipValue(b []byte, i, depth int) (start, end int, err error) {
	i = skipWS(b, i)
	if i >= len(b) {
		return i, i, jsonErr(i, "unexpected end of input")
	}
	if depth > maxDepth {
		return i, i, jsonErr(i, "nesting too deep")
	}
	switch c := b[i]; {
	case c == '"':
		end, err = skipString(b, i)
	case c == '{':
		end, err = skipComposite(b, i, '}', depth)
	case c == '[':
		end, err = skipComposite(b, i, ']', depth)
	case c == 't':
		end, err = skipLiteral(b, i, "true")
	case c == 'f':
		end, err = skipLiteral(b, i, "false")
	case c == 'n':
		end, err = skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		end, err = skipNumber(b, i)
	default:
		return i, i, jsonErr(i, fmt.Sprintf("unexpected %q", c))
	}
	return i, end, err
}

// skipString returns the end of the string starting at b[i] == '"'. It
// finds quotes with IndexByte (vectorised), which is what keeps a scan of a
// megabyte of tool output well under a millisecond. It does not check
// escapes or control characters: the scanner only locates values, and the
// upstream judges the JSON it is sent.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b), jsonErr(i, "unterminated string")
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return i, jsonErr(i, "invalid literal")
	}
	return i + len(lit), nil
}

func skipNumber(b []byte, i int) (int, error) {
	j := i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	if digits() == 0 {
		return j, jsonErr(i, "invalid number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return j, jsonErr(i, "invalid number")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return j, jsonErr(i, "invalid number")
		}
	}
	return j, nil
}

// skipComposite skips an object or an array starting at b[i].
func skipComposite(b []byte, i int, closer byte, depth int) (int, error) {
	j := skipWS(b, i+1)
	if j < len(b) && b[j] == closer {
		return j + 1, nil
	}
	for {
		if closer == '}' {
			j = skipWS(b, j)
			if j >= len(b) || b[j] != '"' {
				return j, jsonErr(j, "want an object key")
			}
			var err error
			if j, err = skipString(b, j); err != nil {
				return j, err
			}
			j = skipWS(b, j)
			if j >= len(b) || b[j] != ':' {
				return j, jsonErr(j, "want ':'")
			}
			j++
		}
		_, end, err := skipValue(b, j, depth+1)
		if err != nil {
			return end, err
		}
		j = skipWS(b, end)
		if j >= len(b) {
			return j, jsonErr(j, "unexpected end of input")
		}
		switch b[j] {
		case ',':
			j++
		case closer:
			return j + 1, nil
		default:
			return j, jsonErr(j, fmt.Sprintf("unexpected %q", b[j]))
		}
	}
}

// objectFields returns the members of the object whose span is s, in
// document order. A value that is not an object is an error.
func objectFields(b []byte, s span) ([]field, error) {
	fs, _, err := objectFieldsEnd(b, s)
	return fs, err
}

// objectFieldsEnd is objectFields that also returns where the object ends.
func objectFieldsEnd(b []byte, s span) ([]field, int, error) {
	i := skipWS(b, s.Start)
	if i >= s.End || b[i] != '{' {
		return nil, i, jsonErr(i, "want an object")
	}
	out := make([]field, 0, 8)
	j := skipWS(b, i+1)
	if j < s.End && b[j] == '}' {
		return out, j + 1, nil
	}
	for {
		j = skipWS(b, j)
		if j >= s.End || b[j] != '"' {
			return nil, j, jsonErr(j, "want an object key")
		}
		kEnd, err := skipString(b, j)
		if err != nil {
			return nil, j, err
		}
		key, err := unquote(b[j:kEnd])
		if err != nil {
			return nil, j, jsonErr(j, "invalid key")
		}
		j = skipWS(b, kEnd)
		if j >= s.End || b[j] != ':' {
			return nil, j, jsonErr(j, "want ':'")
		}
		vs, ve, err := skipValue(b, j+1, 1)
		if err != nil {
			return nil, ve, err
		}
		out = append(out, field{Key: key, Value: span{vs, ve}})
		j = skipWS(b, ve)
		if j >= s.End {
			return nil, j, jsonErr(j, "unexpected end of object")
		}
		switch b[j] {
		case ',':
			j++
		case '}':
			return out, j + 1, nil
		default:
			return nil, j, jsonErr(j, fmt.Sprintf("unexpected %q", b[j]))
		}
	}
}

// arrayElems returns the spans of the elements of the array at s.
func arrayElems(b []byte, s span) ([]span, error) {
	i := skipWS(b, s.Start)
	if i >= s.End || b[i] != '[' {
		return nil, jsonErr(i, "want an array")
	}
	var out []span
	j := skipWS(b, i+1)
	if j < s.End && b[j] == ']' {
		return out, nil
	}
	for {
		vs, ve, err := skipValue(b, j, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, span{vs, ve})
		j = skipWS(b, ve)
		if j >= s.End {
			return nil, jsonErr(j, "unexpected end of array")
		}
		switch b[j] {
		case ',':
			j++
		case ']':
			return out, nil
		default:
			return nil, jsonErr(j, fmt.Sprintf("unexpected %q", b[j]))
		}
	}
}

// document checks that b is exactly one JSON value (whitespace around it
// allowed) and returns its span.
func document(b []byte) (span, error) {
	s, e, err := skipValue(b, 0, 0)
	if err != nil {
		return span{}, err
	}
	if t := skipWS(b, e); t != len(b) {
		return span{}, jsonErr(t, "data after the JSON value")
	}
	return span{s, e}, nil
}

// get returns the value of key among fs.
func get(fs []field, key string) (span, bool) {
	for _, f := range fs {
		if f.Key == key {
			return f.Value, true
		}
	}
	return span{}, false
}

// kind returns the first byte of the value at s: '"', '{', '[', 't', 'f',
// 'n' or a digit/'-'.
func kind(b []byte, s span) byte {
	if s.Start >= s.End {
		return 0
	}
	return b[s.Start]
}

// edit replaces the bytes of Span with New. Tokens, when not nil and not
// 0, is the token count of the text Span holds, known from its decision
// (counted, perhaps after the edit was made, by the replica that cut it).
type edit struct {
	Span   span
	New    []byte
	Tokens *int64
}

package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// rawValue is a JSON value and the byte offset where it starts.
type rawValue struct {
	raw json.RawMessage
	off int64
}

// skipSpace returns the offset of the first byte at or after off that is
// not JSON whitespace, a comma or a colon: where the next value starts.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// objectFields decodes the JSON object at data[base:] one field at a time,
// keeping each value raw with its offset, so that later errors can name
// the byte where a field's value starts.
func (s *source) objectFields(base int64, data []byte, path string) (map[string]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, s.streamErr(base, data, path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, s.errAt(base+skipSpace(data, 0), path, fmt.Sprintf("expected a JSON object, found %s", describe(tok)), nil)
	}
	fields := map[string]rawValue{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, s.streamErr(base, data, path, err)
		}
		key, _ := kt.(string)
		off := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, s.streamErr(base, data, joinPath(path, key), err)
		}
		fields[key] = rawValue{raw: raw, off: base + off}
	}
	if _, err := dec.Token(); err != nil {
		return nil, s.streamErr(base, data, path, err)
	}
	if err := trailing(dec); err != nil {
		return nil, s.errAt(base+dec.InputOffset(), path, "unexpected data after the JSON value", err)
	}
	return fields, nil
}

// arrayElems decodes the JSON array at data[base:] element by element,
// keeping each raw with its offset.
func (s *source) arrayElems(base int64, data []byte, path string) ([]rawValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, s.streamErr(base, data, path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, s.errAt(base+skipSpace(data, 0), path, fmt.Sprintf("expected a JSON array, found %s", describe(tok)), nil)
	}
	var out []rawValue
	for dec.More() {
		off := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, s.streamErr(base, data, fmt.Sprintf("%s[%d]", path, len(out)), err)
		}
		out = append(out, rawValue{raw: raw, off: base + off})
	}
	if _, err := dec.Token(); err != nil {
		return nil, s.streamErr(base, data, path, err)
	}
	if err := trailing(dec); err != nil {
		return nil, s.errAt(base+dec.InputOffset(), path, "unexpected data after the JSON value", err)
	}
	return out, nil
}

// trailing fails when the decoder has anything but whitespace left.
func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("a second JSON value")
		}
		return err
	}
	return nil
}

// decodeAt unmarshals the raw value v into dst, turning errors into
// ParseErrors at the right byte.
func (s *source) decodeAt(v rawValue, path string, dst any) error {
	if err := json.Unmarshal(v.raw, dst); err != nil {
		return s.jsonErr(v.off, path, err)
	}
	return nil
}

func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	}
	return fmt.Sprintf("%v", tok)
}

package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// How a cut's Refs (harness.Cut.Refs: every earlier call a model copy
// points at) are stored: NULL for no list (nil Refs) and otherwise a JSON
// array with one element per call id, in order:
//
//	["call_a","call_b"]
//
// A call id is a JSON string when it is valid UTF-8, and {"b64":"…"} (its
// bytes in standard base64) when it is not, because encoding/json would
// replace the invalid bytes. Every id comes back byte for byte, and the
// common case stays readable and queryable by the database's JSON
// functions.

// rawRef is the element of an id that is not valid UTF-8.
type rawRef struct {
	B64 []byte `json:"b64"`
}

// EncodeRefs encodes a cut's Refs: valid is false (NULL) for nil, so that
// nil comes back nil and an empty list comes back empty.
func EncodeRefs(refs []string) (col string, valid bool, err error) {
	if refs == nil {
		return "", false, nil
	}
	elems := make([]any, len(refs))
	for i, id := range refs {
		if utf8.ValidString(id) {
			elems[i] = id
		} else {
			elems[i] = rawRef{B64: []byte(id)}
		}
	}
	b, err := json.Marshal(elems)
	if err != nil {
		return "", false, fmt.Errorf("refs: %w", err)
	}
	return string(b), true, nil
}

// DecodeRefs is the inverse of EncodeRefs. A column that is not an array
// of strings and {"b64"} objects is an error, never a guess.
func DecodeRefs(col string, valid bool) ([]string, error) {
	if !valid {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(col), &elems); err != nil {
		return nil, fmt.Errorf("refs: %w", err)
	}
	if elems == nil {
		return nil, errors.New("refs: null instead of an array")
	}
	refs := make([]string, len(elems))
	for i, e := range elems {
		switch {
		case len(e) > 0 && e[0] == '"':
			if err := json.Unmarshal(e, &refs[i]); err != nil {
				return nil, fmt.Errorf("refs: element %d: %w", i+1, err)
			}
		case len(e) > 0 && e[0] == '{':
			var raw rawRef
			dec := json.NewDecoder(bytes.NewReader(e))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("refs: element %d: %w", i+1, err)
			}
			if len(raw.B64) == 0 {
				return nil, fmt.Errorf("refs: element %d has no b64 bytes", i+1)
			}
			refs[i] = string(raw.B64)
		default:
			return nil, fmt.Errorf("refs: element %d is %.20s, not a call id", i+1, e)
		}
	}
	return refs, nil
}

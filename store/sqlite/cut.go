package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// How a cut of a result's model copy is stored and read back.
//
// The refs column of cuts (schema v5) keeps harness.Cut.Refs: every earlier
// call a model copy points at. It is NULL for no list (nil Refs) and
// otherwise a JSON array with one element per call id, in order:
//
//	["call_a","call_b"]
//
// A call id is a JSON string when it is valid UTF-8, and {"b64":"…"} (its
// bytes in standard base64) when it is not, because encoding/json would
// replace the invalid bytes. Every id comes back byte for byte, and the
// common case stays readable and queryable with SQLite's json_each.

// rawRef is the element of an id that is not valid UTF-8.
type rawRef struct {
	B64 []byte `json:"b64"`
}

// encodeRefs encodes a cut's Refs for the refs column: NULL for nil, so
// that nil comes back nil and an empty list comes back empty.
func encodeRefs(refs []string) (sql.NullString, error) {
	if refs == nil {
		return sql.NullString{}, nil
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
		return sql.NullString{}, fmt.Errorf("refs: %w", err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeRefs is the inverse of encodeRefs. A column that is not an array
// of strings and {"b64"} objects is an error, never a guess.
func decodeRefs(col sql.NullString) ([]string, error) {
	if !col.Valid {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(col.String), &elems); err != nil {
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

// cutColumns are the columns of a stored cut, in the order scanCut reads
// them.
const cutColumns = "kind, by, bytes_in, bytes_out, locator, of, refs"

// scanCut reads one row whose first columns are scanned into keys and
// whose last are cutColumns.
func scanCut(rows *sql.Rows, keys ...any) (harness.Cut, error) {
	var (
		c    harness.Cut
		refs sql.NullString
	)
	if err := rows.Scan(append(keys, &c.Kind, &c.By, &c.BytesIn, &c.BytesOut, &c.Locator, &c.Of, &refs)...); err != nil {
		return c, err
	}
	var err error
	c.Refs, err = decodeRefs(refs)
	return c, err
}

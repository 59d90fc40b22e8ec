package codec

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// storedPart is how a part is kept in a store. encoding/json would not
// keep every part as it was: it replaces invalid UTF-8 in text, compacts
// the whitespace of a JSON part and refuses a JSON part that does not
// parse. Content it would change is kept as bytes instead, so what a tool
// returned comes back byte for byte. It reads harness.Part's own JSON too.
type storedPart struct {
	Type harness.PartType `json:"type"`
	Text string           `json:"text,omitempty"`
	// RawText holds text that is not valid UTF-8.
	RawText  []byte `json:"raw_text,omitempty"`
	MIMEType string `json:"mime_type,omitempty"`
	// RawMIMEType holds a media type that is not valid UTF-8.
	RawMIMEType []byte `json:"raw_mime_type,omitempty"`
	Data        []byte `json:"data,omitempty"`
	// JSONText holds a JSON part's content exactly as given (valid UTF-8);
	// RawJSON holds it when it is not valid UTF-8.
	JSONText string `json:"json_text,omitempty"`
	RawJSON  []byte `json:"raw_json,omitempty"`
	// JSON is harness.Part's field, read for rows written in its format.
	JSON json.RawMessage `json:"json,omitempty"`
}

// EncodePartsJSON encodes parts losslessly as JSON; nil parts are nil
// (NULL in a store), so that nil comes back nil.
func EncodePartsJSON(parts []harness.Part) ([]byte, error) {
	if parts == nil {
		return nil, nil
	}
	out := make([]storedPart, len(parts))
	for i, p := range parts {
		sp := storedPart{Type: p.Type, MIMEType: p.MIMEType, Data: p.Data}
		if !utf8.ValidString(p.MIMEType) {
			sp.MIMEType, sp.RawMIMEType = "", []byte(p.MIMEType)
		}
		if utf8.ValidString(p.Text) {
			sp.Text = p.Text
		} else {
			sp.RawText = []byte(p.Text)
		}
		if p.JSON != nil {
			if utf8.Valid(p.JSON) {
				sp.JSONText = string(p.JSON)
			} else {
				sp.RawJSON = append([]byte{}, p.JSON...)
			}
		}
		out[i] = sp
	}
	return json.Marshal(out)
}

// EncodeParts stores one plain text part as text (isText true: no JSON to
// encode and decode, which makes loading 10,000 results 3× faster) and
// anything else as JSON. nil parts give isText false and nil JSON.
func EncodeParts(parts []harness.Part) (text string, isText bool, js []byte, err error) {
	if len(parts) == 1 && IsPlainText(parts[0]) {
		return parts[0].Text, true, nil, nil
	}
	js, err = EncodePartsJSON(parts)
	return "", false, js, err
}

// IsPlainText reports whether p is a text part with no other field set,
// which a text column holds exactly.
func IsPlainText(p harness.Part) bool {
	return p.Type == harness.PartText && p.MIMEType == "" && p.Data == nil && p.JSON == nil
}

// DecodeParts is the inverse of EncodeParts: text when isText, else the
// JSON, nil for nil.
func DecodeParts(text string, isText bool, js []byte) ([]harness.Part, error) {
	if isText {
		return []harness.Part{harness.TextPart(text)}, nil
	}
	if js == nil {
		return nil, nil
	}
	var stored []storedPart
	if err := json.Unmarshal(js, &stored); err != nil {
		return nil, err
	}
	parts := make([]harness.Part, len(stored))
	for i, sp := range stored {
		p := harness.Part{Type: sp.Type, Text: sp.Text, MIMEType: sp.MIMEType, Data: sp.Data, JSON: sp.JSON}
		if sp.RawText != nil {
			p.Text = string(sp.RawText)
		}
		if sp.RawMIMEType != nil {
			p.MIMEType = string(sp.RawMIMEType)
		}
		switch {
		case sp.RawJSON != nil:
			p.JSON = json.RawMessage(sp.RawJSON)
		case sp.JSONText != "":
			p.JSON = json.RawMessage(sp.JSONText)
		}
		parts[i] = p
	}
	return parts, nil
}

// EncodeMeta encodes a result's metadata. Metadata is for logs: a value
// JSON cannot carry (a NaN, a channel) is stored as its printed form rather
// than failing the record of the whole round.
func EncodeMeta(meta map[string]any) []byte {
	if b, err := json.Marshal(meta); err == nil {
		return b
	}
	safe := make(map[string]any, len(meta))
	for k, v := range meta {
		if _, err := json.Marshal(v); err != nil {
			v = fmt.Sprintf("%v", v)
		}
		safe[k] = v
	}
	b, err := json.Marshal(safe)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

// Size sums the sizes of parts.
func Size(parts []harness.Part) int {
	n := 0
	for _, p := range parts {
		n += p.Size()
	}
	return n
}

package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// ResultRow is a tool result as a store keeps it: the figures listing and
// logs read, the model's copy (when a guard changed it: Model* set, else
// both unset), the full payload, apart, and the metadata.
type ResultRow struct {
	CallID, Tool      string
	IsError, TimedOut bool
	// Bytes is the full payload's size; FullChars its characters;
	// ModelBytes and ModelChars the model copy's.
	Bytes, FullChars, ModelBytes, ModelChars int
	// ModelText (when ModelIsText) or ModelJSON hold the model copy.
	ModelText   string
	ModelIsText bool
	ModelJSON   []byte
	// Text (when TextIsText) or PartsJSON hold the full payload;
	// Structured its structured content (nil for none).
	Text       string
	TextIsText bool
	PartsJSON  []byte
	Structured []byte
	Meta       []byte
	// Marker holds the lines the guards added to the model copy.
	Marker string
}

// EncodeResult measures and encodes res.
func EncodeResult(res *harness.ToolResult) (*ResultRow, error) {
	if res == nil {
		return nil, errors.New("nil result")
	}
	row := &ResultRow{CallID: res.CallID, Tool: res.Tool, IsError: res.IsError, TimedOut: res.TimedOut, Bytes: res.Bytes}
	if row.Bytes == 0 {
		row.Bytes = res.PayloadSize()
	}
	fullParts := res.FullParts()
	full := harness.Message{Parts: fullParts}.Text()
	row.FullChars = utf8.RuneCountInString(full)
	row.ModelBytes, row.ModelChars = Size(fullParts), row.FullChars
	var err error
	if res.Model != nil {
		if row.ModelText, row.ModelIsText, row.ModelJSON, err = EncodeParts(res.Model); err != nil {
			return nil, fmt.Errorf("model copy: %w", err)
		}
		mt := harness.Message{Parts: res.Model}.Text()
		row.ModelBytes, row.ModelChars = Size(res.Model), utf8.RuneCountInString(mt)
		row.Marker = Marker(full, mt)
	}
	if row.Text, row.TextIsText, row.PartsJSON, err = EncodeParts(res.Parts); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	if len(res.Meta) > 0 {
		row.Meta = EncodeMeta(res.Meta)
	}
	if len(res.Structured) > 0 {
		row.Structured = []byte(res.Structured)
	}
	return row, nil
}

// Decode returns the result row holds; Partial is set when the payload
// was not read (see store.Partial). Bytes, IsError, TimedOut and the
// identity are taken from the row; the other figures are not read back.
func (row *ResultRow) Decode() (*harness.ToolResult, error) {
	res := &harness.ToolResult{CallID: row.CallID, Tool: row.Tool, IsError: row.IsError, TimedOut: row.TimedOut, Bytes: row.Bytes}
	var err error
	if res.Model, err = DecodeParts(row.ModelText, row.ModelIsText, row.ModelJSON); err != nil {
		return nil, fmt.Errorf("result %s: model copy: %w", res.CallID, err)
	}
	if row.Meta != nil {
		if err := json.Unmarshal(row.Meta, &res.Meta); err != nil {
			return nil, fmt.Errorf("result %s: meta: %w", res.CallID, err)
		}
	}
	if res.Parts, err = DecodeParts(row.Text, row.TextIsText, row.PartsJSON); err != nil {
		return nil, fmt.Errorf("result %s: payload: %w", res.CallID, err)
	}
	if row.Structured != nil {
		res.Structured = json.RawMessage(row.Structured)
	}
	res.Partial = store.Partial(res)
	return res, nil
}

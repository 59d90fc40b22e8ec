package openai

import "encoding/json"

// String returns what raw, a JSON string, holds ("" for null or nothing):
// the form both APIs give a call's arguments and a custom tool's input.
// ok is false for any other JSON value.
func String(raw json.RawMessage) (s string, ok bool) {
	if len(raw) == 0 {
		return "", true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

package toolschema

import (
	"encoding/json"
	"fmt"
)

// Why an argument error carries a tool's full input schema.
const (
	// ShortForm: the request's tool list shows another schema for the tool
	// (a selector's stub of a deferred tool).
	ShortForm = "the tool list shows a short form"
	// NotOffered: the request's tool list does not offer the tool.
	NotOffered = "the tool list does not offer it"
)

// Note gives the model a tool's full input schema, saying why (ShortForm
// or NotOffered), and asks it to fix the arguments and call again. The
// engine ends an argument error with it; the proxy appends it to a
// client's error result for a tool it showed in a short form.
func Note(why string, schema json.RawMessage) string {
	return fmt.Sprintf("Its full input schema (%s): %s. Fix the arguments and call again.", why, schema)
}

package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentharness/harness"
)

// decodeArgs parses a call's arguments into v, refusing unknown fields. The
// agent has validated them against the schema already; this also protects
// callers that invoke a tool function directly.
func decodeArgs(call *harness.ToolCall, v any) error {
	raw := bytes.TrimSpace(call.Args)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid: %v; send one JSON object matching the tool's schema", err)
	}
	if dec.More() {
		return fmt.Errorf("arguments are not valid: extra data after the JSON object")
	}
	return nil
}

// field is one property of an input schema.
type field struct {
	name   string
	schema map[string]any
}

// objectSchema builds a strict JSON Schema for an arguments object: the
// properties in the order given (the model reads them in that order),
// required ones listed, no other property allowed. The bytes are the same
// on every call, which keeps the tool list cacheable.
func objectSchema(required []string, fields ...field) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.name)
		v, err := json.Marshal(f.schema)
		if err != nil {
			// The schemas are literals of this package; a failure is a bug.
			panic(fmt.Sprintf("workspace: schema of %s: %v", f.name, err))
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`},"required":`)
	if required == nil {
		required = []string{}
	}
	r, _ := json.Marshal(required)
	b.Write(r)
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}

func stringField(name, desc string) field {
	return field{name, map[string]any{"type": "string", "description": desc}}
}

func intField(name, desc string, minimum, maximum int) field {
	return field{name, map[string]any{"type": "integer", "description": desc, "minimum": minimum, "maximum": maximum}}
}

func boolField(name, desc string) field {
	return field{name, map[string]any{"type": "boolean", "description": desc}}
}

// failf returns an IsError result whose text starts with the tool's name.
func failf(tool, format string, args ...any) *harness.ToolResult {
	return harness.ErrorResult("%s: %s", tool, fmt.Sprintf(format, args...))
}

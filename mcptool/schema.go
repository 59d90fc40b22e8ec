package mcptool

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// inputSchema returns a tool's input schema as JSON that compiles the way
// harness.New compiles it (offline, no remote $ref). A schema that only
// fails because of its "$schema" draft URL is kept without it; one that
// does not compile at all is an error, and the tool is left out rather
// than making the whole agent fail to start.
func inputSchema(schema any) (json.RawMessage, error) {
	if schema == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema cannot be encoded: %w", err)
	}
	if compiles(raw) == nil {
		return raw, nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		if _, ok := m["$schema"]; ok {
			delete(m, "$schema")
			if stripped, err := json.Marshal(m); err == nil && compiles(stripped) == nil {
				return stripped, nil
			}
		}
	}
	return nil, fmt.Errorf("input schema does not compile: %w", compiles(raw))
}

func compiles(raw []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const url = "harness:///mcptool/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}

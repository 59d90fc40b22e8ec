package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// argsValidator checks a call's arguments against a tool's input schema.
type argsValidator struct {
	schema *jsonschema.Schema // nil: any object
}

// compileSchema compiles a tool's input schema. An empty schema accepts any
// JSON object.
func compileSchema(tool string, raw json.RawMessage) (*argsValidator, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &argsValidator{}, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema is not valid JSON: %w", tool, err)
	}
	c := jsonschema.NewCompiler()
	// Schemas are offline data: never fetch a remote $ref.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	url := "harness:///tools/" + tool + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", tool, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema does not compile: %w", tool, err)
	}
	return &argsValidator{schema: s}, nil
}

// check parses args and validates them. The error it returns is written
// for the model: it says which field failed and why.
func (v *argsValidator) check(args json.RawMessage) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	var syntax any
	if err := json.Unmarshal(trimmed, &syntax); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("arguments are not valid JSON (%v at byte %d); send one JSON object", se, se.Offset)
		}
		return fmt.Errorf("arguments are not valid JSON (%v); send one JSON object", err)
	}
	if _, ok := syntax.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(syntax))
	}
	if v.schema == nil {
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON (%v); send one JSON object", err)
	}
	err = v.schema.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("arguments could not be validated: %v", err)
	}
	var problems []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "(the arguments object)"
		}
		problems = append(problems, fmt.Sprintf("at %s: %s", loc, u.Error.String()))
	}
	if len(problems) == 0 {
		problems = append(problems, ve.Error())
	}
	return fmt.Errorf("arguments do not match the tool's input schema: %s", strings.Join(problems, "; "))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

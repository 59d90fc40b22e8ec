package toolschema

import "encoding/json"

// sent is the JSON a tool's schema is sent as: the fields of
// harness.ToolSpec that reach the model, with its tags.
type sent struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Bytes is the size of a tool's schema as it is sent to a model: the JSON
// of its name, description and input schema. An input schema that is not
// valid JSON counts its raw bytes beside the name and description.
func Bytes(name, description string, inputSchema json.RawMessage) int {
	b, err := json.Marshal(sent{name, description, inputSchema})
	if err != nil {
		return len(name) + len(description) + len(inputSchema)
	}
	return len(b)
}

package toolselect

import (
	"path"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness"
)

// Schemas counts tool schemas as a request sends them: how many, and
// their bytes as a model is sent them (the JSON of name,
// description and input schema).
type Schemas struct {
	Tools int `json:"tools"`
	Bytes int `json:"bytes"`
}

// Measure counts the schemas of tools.
func Measure(tools []harness.ToolSpec) Schemas {
	s := Schemas{Tools: len(tools)}
	for _, t := range tools {
		s.Bytes += toolschema.Bytes(t.Name, t.Description, t.InputSchema)
	}
	return s
}

// data is the Data of a selection event: what is offered each request of
// the turn, and what offering every tool would have cost.
func (s Schemas) data(mode string, all Schemas) map[string]any {
	return map[string]any{
		"mode":             mode,
		"tools_offered":    s.Tools,
		"schema_bytes":     s.Bytes,
		"tools_all":        all.Tools,
		"schema_bytes_all": all.Bytes,
	}
}

// globMatch reports whether name matches a path.Match pattern; a pattern
// that is not valid glob syntax matches only itself.
func globMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	if err != nil {
		return pattern == name
	}
	return ok
}

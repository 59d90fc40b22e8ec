package toolselect

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/agentharness/harness"
)

// fixtureTool is one tool of testdata/tools84.json: an 84-tool connector
// (blog, comments, issues, team, billing, analytics, CRM, calendar) of the
// size of a large real connector.
type fixtureTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ReadOnly    bool            `json:"readOnly"`
	Destructive bool            `json:"destructive"`
}

func loadTools(t testing.TB) []fixtureTool {
	t.Helper()
	data, err := os.ReadFile("testdata/tools84.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []fixtureTool
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

func loadSpecs(t testing.TB) []harness.ToolSpec {
	var specs []harness.ToolSpec
	for _, ft := range loadTools(t) {
		specs = append(specs, harness.ToolSpec{Name: ft.Name, Description: ft.Description, InputSchema: ft.InputSchema})
	}
	return specs
}

// rankingCase is a request and the tools it needs.
type rankingCase struct {
	Request string   `json:"request"`
	Expect  []string `json:"expect"`
}

func loadCases(t testing.TB, file string) []rankingCase {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []rankingCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

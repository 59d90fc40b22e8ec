package harness_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestArgumentsErrorCarriesSchema: a call whose arguments fail the tool's
// schema gets the full schema back when the request showed the model a
// short form of it (a deferred tool's stub), and only the error when it
// showed the schema itself.
func TestArgumentsErrorCarriesSchema(t *testing.T) {
	full := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file to read"}},"required":["path"]}`)
	spec := harness.ToolSpec{Name: "read", Description: "Reads a file.", InputSchema: full, Risk: harness.ReadOnly}
	eng, err := harness.NewEngine(&harness.Options{Tools: []harness.Tool{{Spec: spec, Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		t.Error("the tool ran with arguments that fail its schema")
		return harness.TextResult("x"), nil
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	stub := spec
	stub.InputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	call := harness.ToolCall{ID: "c1", Name: "read", Args: json.RawMessage(`{}`)}
	for _, c := range []struct {
		name  string
		shown []harness.ToolSpec
		want  bool
	}{
		{"stub shown", []harness.ToolSpec{stub}, true},
		{"schema shown", []harness.ToolSpec{spec}, false},
		{"no view", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := harness.CallInfo{Conversation: "c", Turn: 1, Round: 1}
			if c.shown != nil {
				info.View = &harness.View{Tools: c.shown}
			}
			res := eng.Call(context.Background(), info, call)
			if !res.IsError || !strings.Contains(res.ModelText(), "Fix the arguments") {
				t.Fatalf("result %q: want an argument error", res.ModelText())
			}
			if got := strings.Contains(res.ModelText(), string(full)); got != c.want {
				t.Errorf("full schema in the error: %v, want %v (%q)", got, c.want, res.ModelText())
			}
		})
	}
}

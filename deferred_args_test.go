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
// short form of it (a deferred tool's stub) or did not offer the tool at
// all (a selection left it out), and only the error when it showed the
// schema itself or there is no view to tell. A call whose arguments fit
// runs, offered or not.
func TestArgumentsErrorCarriesSchema(t *testing.T) {
	full := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file to read"}},"required":["path"]}`)
	spec := harness.ToolSpec{Name: "read", Description: "Reads a file.", InputSchema: full, Risk: harness.ReadOnly}
	ran := 0
	eng, err := harness.NewEngine(&harness.Options{Tools: []harness.Tool{{Spec: spec, Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		ran++
		return harness.TextResult("contents"), nil
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	stub := spec
	stub.InputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	other := harness.ToolSpec{Name: "write", Description: "Writes a file.", InputSchema: full}
	bad, good := json.RawMessage(`{}`), json.RawMessage(`{"path":"a.txt"}`)
	for _, c := range []struct {
		name   string
		shown  []harness.ToolSpec
		args   json.RawMessage
		schema bool // the error carries the full schema
	}{
		{"stub shown", []harness.ToolSpec{stub}, bad, true},
		{"schema shown", []harness.ToolSpec{spec}, bad, false},
		{"not offered", []harness.ToolSpec{other}, bad, true},
		{"nothing offered", []harness.ToolSpec{}, bad, true},
		{"no view", nil, bad, false},
		{"not offered, arguments fit", []harness.ToolSpec{other}, good, false},
		{"stub shown, arguments fit", []harness.ToolSpec{stub}, good, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ran = 0
			info := harness.CallInfo{Conversation: "c", Turn: 1, Round: 1}
			if c.shown != nil {
				info.View = &harness.View{Tools: c.shown}
			}
			res := eng.Call(context.Background(), info, harness.ToolCall{ID: "c1", Name: "read", Args: c.args})
			if fits := string(c.args) == string(good); fits {
				if res.IsError || ran != 1 || res.ModelText() != "contents" {
					t.Fatalf("result %q, tool ran %d times: arguments that fit must run the tool once", res.ModelText(), ran)
				}
				return
			}
			if ran != 0 {
				t.Error("the tool ran with arguments that fail its schema")
			}
			if !res.IsError || !strings.Contains(res.ModelText(), "Fix the arguments") {
				t.Fatalf("result %q: want an argument error", res.ModelText())
			}
			if got := strings.Contains(res.ModelText(), string(full)); got != c.schema {
				t.Errorf("full schema in the error: %v, want %v (%q)", got, c.schema, res.ModelText())
			}
		})
	}
}

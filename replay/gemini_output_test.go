package replay

import (
	"errors"
	"strings"
	"testing"
)

// TestGeminiOutputMapping: a stream-json output's events become turns,
// calls and results (ids as the API got them, an assistant's pieces
// joined, a tool error as an error result); a json output is one call
// with its answer; a json output of a failed run is a clear error.
func TestGeminiOutputMapping(t *testing.T) {
	rec, err := ParseFile("testdata/gemini-cli/output-stream-json.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 1 || rec.Turns[0].Input != "Which version of zod does package.json ask for? Read it with cat." {
		t.Fatalf("turns: %+v", rec.Turns)
	}
	calls := rec.Turns[0].Calls
	if len(calls) != 2 || len(calls[0].Assistant.ToolCalls) != 1 || calls[0].Assistant.ToolCalls[0].ID != "call_pkg" ||
		len(calls[0].Results) != 1 || !strings.Contains(calls[0].Results[0].Shown, `"zod":"^3.23.0"`) ||
		calls[1].Assistant.Text() != "package.json pins zod ^3.23.0." || calls[0].Time.IsZero() {
		t.Fatalf("calls: %+v", calls)
	}

	data := `{"type":"init","session_id":"s1","model":"gemini-2.5-pro"}
{"type":"message","role":"user","content":"q"}
{"type":"message","role":"assistant","content":"Let me ","delta":true}
{"type":"message","role":"assistant","content":"look.","delta":true}
{"type":"tool_use","tool_name":"read_file","tool_id":"read_file__a","parameters":{"path":"x"}}
{"type":"tool_use","tool_name":"ls","tool_id":"ls__b","parameters":{}}
{"type":"tool_result","tool_id":"ls__b","status":"success","output":"x"}
{"type":"tool_result","tool_id":"read_file__a","status":"error","error":{"type":"not_found","message":"no such file"}}
{"type":"message","role":"assistant","content":"done","delta":true}
{"type":"message","role":"user","content":"again"}
{"type":"message","role":"assistant","content":"ok"}
{"type":"result","status":"success","stats":{}}
`
	rec, err = Parse("run.jsonl", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "s1" || rec.Model != "gemini-2.5-pro" || len(rec.Turns) != 2 || len(rec.Turns[0].Calls) != 2 || len(rec.Turns[1].Calls) != 1 {
		t.Fatalf("id %q model %q, %d turns", rec.ID, rec.Model, len(rec.Turns))
	}
	first := rec.Turns[0].Calls[0]
	if first.Assistant.Text() != "Let me look." || len(first.Results) != 2 || first.Results[0].CallID != "a" ||
		!first.Results[0].IsError || first.Results[0].Shown != "no such file" || first.Results[1].Shown != "x" {
		t.Fatalf("first call: %q, results %+v", first.Assistant.Text(), first.Results)
	}

	rec, err = ParseFile("testdata/gemini-cli/output-json.json")
	if err != nil || rec.Calls() != 1 || rec.Turns[0].Calls[0].Assistant.Text() != "package.json pins zod ^3.23.0." {
		t.Fatalf("json output: %v", err)
	}
	_, err = Parse("out.json", []byte(`{"session_id":"s","error":{"type":"Error","message":"Please set an Auth method","code":41}}`))
	if !errors.Is(err, ErrNoModelCall) || !strings.Contains(err.Error(), "Please set an Auth method") {
		t.Fatalf("failed run: %v", err)
	}
}

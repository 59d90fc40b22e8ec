package replay

import (
	"testing"

	"github.com/agentharness/harness"
)

// TestCompactionMarkers: newer Claude Code writes a compact_boundary
// before the summary, and Codex a "compacted" line; each starts a model
// context of its own that begins with the summary.
func TestCompactionMarkers(t *testing.T) {
	cc := `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"fix it"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m1","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command": "make"}}],"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7}}}
{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":true}]}}
{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"sessionId":"s"}
{"type":"user","uuid":"u2","parentUuid":"b1","sessionId":"s","message":{"role":"user","content":"summary of the work so far"}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"text","text":"done"}]}}
`
	recs, err := ParseAll("s.jsonl", []byte(cc))
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	if recs[0].ID != "s/part-1" || recs[1].ID != "s/part-2" || recs[1].Turns[0].Input != "summary of the work so far" {
		t.Errorf("ids %q %q, second input %q", recs[0].ID, recs[1].ID, recs[1].Turns[0].Input)
	}
	c := recs[0].Turns[0].Calls[0]
	if c.Usage != (harness.Usage{Input: 105, Cached: 100, Output: 7}) || !c.Results[0].IsError || string(c.Assistant.ToolCalls[0].Args) != `{"command":"make"}` {
		t.Errorf("call %+v", c)
	}

	cx := `{"type":"session_meta","payload":{"id":"r","cli_version":"0.171.0"}}
{"type":"turn_context","payload":{"model":"gpt-5-codex"}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"pwd\"]}","call_id":"c2"}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":120},"last_token_usage":{"input_tokens":100,"cached_input_tokens":80,"output_tokens":20}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":120},"last_token_usage":{"input_tokens":100,"cached_input_tokens":80,"output_tokens":20}}}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"/w"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"a b","success":false}}}
{"type":"compacted","payload":{"message":"what happened so far"}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"all done"}]}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":150},"last_token_usage":{"input_tokens":25,"cached_input_tokens":0,"output_tokens":5}}}}
`
	recs, err = ParseAll("rollout-x.jsonl", []byte(cx))
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	first := recs[0].Turns[0].Calls
	if len(first) != 1 || len(first[0].Assistant.ToolCalls) != 2 || first[0].Results[0].CallID != "c1" || !first[0].Results[0].IsError ||
		first[0].Usage != (harness.Usage{Input: 100, Cached: 80, Output: 20}) || recs[0].Model != "gpt-5-codex" {
		t.Errorf("parallel calls as one response, results in call order, usage once: %+v", first)
	}
	if recs[1].ID != "r/part-2" || recs[1].Turns[0].Input != "what happened so far" || recs[1].Calls() != 1 || recs[1].Turns[0].Calls[0].Usage.Input != 25 {
		t.Errorf("after compaction: %+v", recs[1])
	}
}

package replay

import "testing"

// checkAll is checkParse for every recording of a multi-context import.
func checkAll(t *testing.T, name string, data []byte, recs []*Recording, err error) {
	t.Helper()
	if err != nil {
		checkParse(t, name, data, nil, err)
		return
	}
	if len(recs) == 0 {
		t.Fatal("no recording and no error")
	}
	for _, r := range recs {
		checkParse(t, name, data, r, nil)
	}
}

func FuzzParseClaudeCode(f *testing.F) {
	seeds(f, "testdata/claude-code/agent-a4e3ca2.jsonl", "testdata/claude-code/persisted.json")
	f.Add([]byte(`{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"x"}}` + "\n" +
		`{"type":"assistant","uuid":"a","parentUuid":"u","sessionId":"s","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}],"usage":{"input_tokens":1}}}` + "\n" +
		`{"type":"user","uuid":"r","parentUuid":"a","isSidechain":true,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok"}]}]}}`))
	f.Add([]byte(`[{"type":"user","isCompactSummary":true,"message":{"content":"sum"}},{"type":"system","subtype":"compact_boundary"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := parseClaudeCodeAll("f.jsonl", data, nil)
		checkAll(t, "f.jsonl", data, recs, err)
	})
}

func FuzzParseCodex(f *testing.F) {
	seeds(f, "testdata/codex/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl", "testdata/codex/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl")
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"s","base_instructions":{"text":"sys"}}}` + "\n" +
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":5},"last_token_usage":{"input_tokens":4,"output_tokens":1}}}}` + "\n" +
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":{"content":"x","success":false}}}` + "\n" +
		`{"type":"compacted","payload":{"message":"summary"}}`))
	// Codex's own messages: before the prompt, after it (a skill), before
	// a later prompt, between a call and its output, and at the end.
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context></environment_context>"}]}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"$s"}]}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<skill>"}]}}` + "\n" +
		`{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<turn_aborted>"}]}}` + "\n" +
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"x"}}` + "\n" +
		`{"type":"response_item","payload":{"type":"message","role":"user","content":"<user_shell_command>"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := parseCodexAll("f.jsonl", data)
		checkAll(t, "f.jsonl", data, recs, err)
	})
}

func FuzzParseSWEAgent(f *testing.F) {
	seeds(f, "testdata/swe-agent/demo__function_calling_simple.traj")
	f.Add([]byte(`{"history":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"c","action":"ls"},{"role":"user","content":"out"},{"role":"assistant","content":[{"type":"text","text":"x"}],"tool_calls":[{"id":"i","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"r","tool_call_ids":["i"]}],"info":{"model_stats":{"api_calls":2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseSWEAgent("f.traj", data)
		checkParse(t, "f.traj", data, rec, err)
	})
}

// FuzzParseGeminiOutput: Gemini CLI's stream-json and json outputs.
func FuzzParseGeminiOutput(f *testing.F) {
	seeds(f, "testdata/gemini-cli/output-stream-json.jsonl", "testdata/gemini-cli/output-json.json")
	f.Add([]byte(`{"type":"init","session_id":"s","model":"auto"}` + "\n" + `{"type":"message","role":"user","content":"q"}` + "\n" +
		`{"type":"message","role":"assistant","content":"a","delta":true}` + "\n" + `{"type":"tool_use","tool_name":"ls","tool_id":"ls__1","parameters":{}}` + "\n" +
		`{"type":"tool_use","tool_name":"cat","tool_id":"cat__2","parameters":{"f":1}}` + "\n" + `{"type":"tool_result","tool_id":"cat__2","status":"error","error":{"type":"x","message":"no"}}` + "\n" +
		`{"type":"tool_result","tool_id":"ls__1","status":"success","output":"x"}` + "\n" + `{"type":"error","severity":"warning","message":"w"}` + "\n" +
		`{"type":"message","role":"assistant","content":"done"}` + "\n" + `{"type":"result","status":"error","error":{"type":"t","message":"m"},"stats":{"models":{"a":{"input_tokens":3}}}}` + "\n" + `{"type":"tool_res`))
	f.Add([]byte(`{"session_id":"s","error":{"type":"Error","message":"auth","code":41}}`))
	f.Add([]byte(`{"session_id":"s","response":"","stats":{"models":{"m":{"tokens":{"prompt":5}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse("out.jsonl", data)
		checkParse(t, "out.jsonl", data, rec, err)
	})
}

func FuzzParseGeminiCLI(f *testing.F) {
	seeds(f, "testdata/gemini-cli/session-2026-04-06T10-00-hand.json", "testdata/gemini-cli/session-2026-12-02T04-05-62a661cc.jsonl")
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}` + "\n" + `{"id":"g","type":"gemini","toolCalls":[{"id":"ls__a","name":"ls","args":{},"result":[{"functionResponse":{"id":"ls__a","name":"ls","response":{"output":"x"}}}]}]}` + "\n" +
		`{"id":"u","type":"user","content":[{"functionResponse":{"id":"ls__a","name":"ls","response":{"output":"x"}}}]}` + "\n" + `{"$set":{"messages":[{"id":"g","type":"gemini"}]}}` + "\n" + `{"$rewindTo":"z"}`))
	f.Add([]byte(`[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}},{"functionCall":{"id":"b","name":"cat","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"id":"b","name":"cat","response":{"output":"x"}}},{"functionResponse":{"name":"ls","response":{"error":"e"}}},{"functionResponse":{"id":"z","name":"sh","response":{}}}]}]`))
	f.Add([]byte(`[{"role":"user","parts":[{"text":"<session_context>x</session_context>"}]},{"role":"user","parts":[{"text":"Here is the user's editor context"}]},{"role":"model","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"Here is a summary of changes in the user's editor context"}]}]`))
	f.Add([]byte(`{"sessionId":"s","messages":[{"type":"user","content":[{"text":"This is the Gemini CLI. We are setting up the context for our chat."}]},{"type":"user","content":"q"},{"type":"gemini","content":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parseGeminiCLI("f.json", data)
		checkParse(t, "f.json", data, rec, err)
	})
}

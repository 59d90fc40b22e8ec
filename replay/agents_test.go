package replay

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// TestAgentFormats imports one fixture of each agent's format through
// Parse (so detection is by content) and checks what each maps.
func TestAgentFormats(t *testing.T) {
	for _, tc := range []struct {
		file, format, id, model string
		calls, results          int
		system                  bool
		warn                    []string // substrings every one of which a warning holds
	}{
		{"claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl", formatClaudeCode, "155715ec-f4e9-47ea-859c-2e4cfcceab6f", "claude-opus-4-5-20251101", 8, 5, false,
			[]string{"the system prompt and the tool schemas", "thinking blocks"}},
		{"claude-code/agent-a4e3ca2.jsonl", formatClaudeCode, "155715ec-f4e9-47ea-859c-2e4cfcceab6f/agent-a4e3ca2", "claude-opus-4-5-20251101", 1, 0, false,
			[]string{"subagent's own context"}},
		{"claude-code/persisted.json", formatClaudeCode, "04c2be8b-aa6b-4b11-b2f4-26623c099ab1", "claude-opus-4-6", 6, 6, false,
			[]string{"3 results were cut by Claude Code itself"}},
		{"claude-code/output-stream-json.jsonl", formatClaudeCode, "47f82aeb-6afa-4276-93ba-ad7ba047bb8e", "claude-opus-4-8", 2, 1, false,
			[]string{"not recorded by claude-code", "stream-json output records the calls and their results, not the prompt"}},
		{"claude-code/output-json.json", formatClaudeCode, "6ab9aaed-1e52-480c-bbfe-261829c9b9d6", "", 1, 0, false,
			[]string{"json output records only the final answer"}},
		{"codex/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl", formatCodex, "019ab737-4612-7f91-bf54-c6a3b3870ee6", "gpt-5.1-codex-max", 3, 2, false,
			[]string{"not recorded by codex: the system prompt and the tool schemas"}},
		{"codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", formatCodex, "019c2a58-c0cc-7860-b9ca-7e2dcda03ddb", "gpt-5.2-codex", 4, 4, true,
			[]string{"not recorded by codex: the tool schemas", "1 outputs in this rollout were cut by Codex itself"}},
		{"codex/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl", formatCodex, "9aa0221f-be4a-424a-8633-55496d1e2dc3", "", 2, 1, false,
			[]string{"no usage recorded"}},
		{"opencode/run-json.jsonl", formatOpencode, "ses_db4261c2cffe77f4sbyloyGT7D", "", 2, 1, false,
			[]string{"opencode run --format json output records each step's text, tool calls, their outputs and usage"}},
		{"codex/exec-json.jsonl", formatCodex, "01a24bd6-22e2-7601-95da-6b289d03d7e1", "", 2, 1, false,
			[]string{"codex exec --json output records the commands the agent ran and their outputs"}},
		{"swe-agent/demo__function_calling_simple.traj", formatSWEAgent, "demo__function_calling_simple", "", 5, 5, true,
			[]string{"not recorded by swe-agent: the tool schemas", "history processors"}},
		{"swe-agent/demo__ctf__misc__networking_1.traj", formatSWEAgent, "demo__ctf__misc__networking_1", "", 4, 3, true,
			[]string{"without function calling"}},
		{"gemini-cli/trajectory.json", formatGeminiCLI, "trajectory", "", 9, 7, false,
			[]string{"cut by Gemini CLI itself", "answer no call", "1 replies Gemini CLI writes itself after a compression's summary"}},
		{"gemini-cli/session-2026-04-06T10-00-hand.json", formatGeminiCLI, "c88f36a3-hand-written", "gemini-2.5-pro", 2, 2, false,
			[]string{"not recorded by gemini-cli"}},
		{"gemini-cli/session-2026-12-02T04-05-62a661cc.jsonl", formatGeminiCLI, "62a661cc-c012-419e-96b9-d8012ca8849f", "gemini-3.1-pro-preview", 3, 2, false,
			[]string{"not recorded by gemini-cli", "cut by Gemini CLI itself"}},
		{"gemini-cli/output-stream-json.jsonl", formatGeminiCLI, "92970e04-eda3-4d7a-917b-3fad87e943ed", "gemini-3.1-pro-preview", 2, 1, false,
			[]string{"not recorded by gemini-cli", "stream-json output records the prompt", "not the context Gemini CLI sends before the prompt"}},
		{"gemini-cli/output-json.json", formatGeminiCLI, "03e410cd-39b2-4a0d-acc1-b4f6a2d1c6fe", "gemini-3.1-pro-preview", 1, 0, false,
			[]string{"json output records only the final answer", "not the prompt, the model calls, the tool calls"}},
		{"gemini-cli/session-2026-12-05T11-53-92970e04.jsonl", formatGeminiCLI, "92970e04-eda3-4d7a-917b-3fad87e943ed", "gemini-3.1-pro-preview", 2, 1, false,
			[]string{"not recorded by gemini-cli"}},
		{"anthropic/messages.json", formatAnthropic, "messages", "", 4, 4, false,
			[]string{"not recorded by anthropic-messages: the system prompt and the tool schemas", "1 thinking blocks left out", "1 images and documents in user messages left out"}},
		{"anthropic/request.json", formatAnthropic, "request", "claude-sonnet-4-5", 2, 1, true, nil},
		{"responses/items.json", formatResponses, "items", "", 4, 3, true,
			[]string{"not recorded by openai-responses: the tool schemas", "1 reasoning items left out"}},
		{"mini-swe-agent-1/calc__add-1.traj.json", formatMiniSWE, "calc__add-1", "anthropic/claude-sonnet-4-20250514", 4, 3, true,
			[]string{"the action of 3 replies (their one ```bash or mswea_bash_command block) is recorded as a call of tool \"bash\""}},
		{"mini-swe-agent-2/calc__add-2.traj.json", formatMiniSWE, "calc__add-2", "gpt-5-mini-2025-08-07", 5, 3, true,
			[]string{"the action of 4 replies", "1 replies the agent could not parse are recorded from the format errors that quote them"}},
		{"mini-swe-agent-2/calc__add-3.traj.json", formatMiniSWE, "calc__add-3", "gpt-5-mini-2025-08-07", 4, 4, true,
			[]string{"3 reasoning items left out"}},
		{"openhands/trajectory.json", formatOpenHands, "trajectory", "claude-sonnet-4-5", 3, 3, true,
			[]string{"1 recall observations (knowledge OpenHands adds to the prompt) left out"}},
		{"openhands/output.jsonl", formatOpenHands, "calc__add-1", "claude-sonnet-4-5", 3, 3, true, nil},
		{"openhands/output-sdk.jsonl", formatOpenHands, "greet__hello-1", "", 3, 3, true, []string{"no usage recorded"}},
		{"responses/request.json", formatResponses, "request", "gpt-5", 2, 1, true,
			[]string{"1 built-in tools of the provider (web_search) carry no schema"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rec, err := ParseFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Format != tc.format || rec.ID != tc.id || rec.Model != tc.model {
				t.Errorf("format %q id %q model %q", rec.Format, rec.ID, rec.Model)
			}
			results := 0
			rec.eachResult(func(_, _ int, r *Result) { results++ })
			if rec.Calls() != tc.calls || results != tc.results {
				t.Errorf("%d calls and %d results, want %d and %d", rec.Calls(), results, tc.calls, tc.results)
			}
			if (rec.System != "") != tc.system {
				t.Errorf("system prompt %d chars, want recorded %v", len(rec.System), tc.system)
			}
			all := strings.Join(rec.Warnings, "\n")
			for _, w := range tc.warn {
				if !strings.Contains(all, w) {
					t.Errorf("no warning with %q in:\n%s", w, all)
				}
			}
			data, _ := os.ReadFile(filepath.Join("testdata", tc.file))
			checkParse(t, filepath.Join("testdata", tc.file), data, rec, nil)
		})
	}
}

// TestClaudeCodeMapping checks the parts of a Claude Code session that
// have no twin in the chat formats: one response split over entries,
// usage with cache reads and writes, parallel calls paired by id, cut
// results with their toolUseResult text, sidechains and compaction.
func TestClaudeCodeMapping(t *testing.T) {
	rec, err := ParseFile("testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	first := rec.Turns[0].Calls[0]
	// message.usage: input 10, cache read 0, cache creation 23,597, output 8.
	if want := (harness.Usage{Input: 10 + 23_597, CacheWrite: 23_597, Output: 8}); !first.HasUsage || first.Usage != want {
		t.Errorf("first call usage %+v, want %+v", first.Usage, want)
	}

	data, err := os.ReadFile("testdata/claude-code/persisted.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseClaudeCodeAll("persisted.json", data, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	var parallel *Call
	var cut []*Result
	for _, turn := range recs[0].Turns {
		for _, c := range turn.Calls {
			if len(c.Assistant.ToolCalls) == 2 {
				parallel = c
			}
			for _, r := range c.Results {
				if strings.Contains(r.Shown, "<persisted-output>") {
					cut = append(cut, r)
				}
			}
		}
	}
	if parallel == nil || len(parallel.Results) != 2 || parallel.Results[0].CallID != "toolu_01VH3CoiF44szPM58AGkgLFU" || !parallel.Results[1].IsError {
		t.Fatalf("the two parallel Reads are not one call answered in order (the second an error): %+v", parallel)
	}
	if len(cut) != 3 {
		t.Fatalf("%d results Claude Code cut, want 3", len(cut))
	}
	for _, r := range cut {
		if full := r.FullText(); len(full) <= len(r.Shown) || strings.Contains(full, "<persisted-output>") {
			t.Errorf("cut result %s: full text %d chars (shown %d) is not toolUseResult's", r.CallID, len(full), len(r.Shown))
		}
	}

	data, err = os.ReadFile("testdata/claude-code/subagents.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, err = parseClaudeCodeAll("subagents.json", data, nil)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings (want the main chain and one subagent), %v", len(recs), err)
	}
	main, sub := recs[0], recs[1]
	if strings.Contains(main.ID, "agent-") || !strings.HasSuffix(sub.ID, "/agent-1") {
		t.Errorf("ids %q, %q", main.ID, sub.ID)
	}
	tasks := 0
	for _, c := range main.Turns[0].Calls {
		for _, tc := range c.Assistant.ToolCalls {
			if tc.Name == "Task" {
				tasks++
			}
		}
	}
	if tasks != 4 {
		t.Errorf("main chain has %d Task calls, want the 4 parallel ones", tasks)
	}
	if !strings.Contains(sub.Turns[0].Input, "") || sub.Calls() != 7 {
		t.Errorf("subagent: %d calls", sub.Calls())
	}
	// The file's subagent is said once, by the main chain.
	if w := strings.Join(main.Warnings, "\n"); !strings.Contains(w, "the session's subagent context (isSidechain) is imported as a recording of its own") {
		t.Errorf("main chain's warnings do not count its subagent:\n%s", w)
	}
	if w := strings.Join(sub.Warnings, "\n"); strings.Contains(w, "subagent") {
		t.Errorf("a subagent beside its main chain warns of itself:\n%s", w)
	}

	data, err = os.ReadFile("testdata/claude-code/compacted.json")
	if err != nil {
		t.Fatal(err)
	}
	recs, err = parseClaudeCodeAll("compacted.json", data, nil)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings (want one per compaction segment), %v", len(recs), err)
	}
	if !strings.HasPrefix(recs[1].Turns[0].Input, "This session is being continued from a previous conversation") {
		t.Errorf("the second part does not start from the summary: %.80q", recs[1].Turns[0].Input)
	}
}

// TestCodexMapping checks Codex usage (last_token_usage, duplicates
// ignored) and that an output Codex cut is kept as shown.
func TestCodexMapping(t *testing.T) {
	rec, err := ParseFile("testdata/codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.System, "You are Codex") {
		t.Errorf("base_instructions not the system prompt: %.40q", rec.System)
	}
	billed := 0
	var cut *Result
	for _, turn := range rec.Turns {
		for _, c := range turn.Calls {
			if c.HasUsage {
				billed++
				if c.Usage.Input < c.Usage.Cached || c.Usage.Output == 0 {
					t.Errorf("usage %+v", c.Usage)
				}
			}
			for _, r := range c.Results {
				if strings.Contains(r.Shown, "tokens truncated…") {
					cut = r
				}
			}
		}
	}
	if billed != rec.Calls() {
		t.Errorf("%d of %d calls billed", billed, rec.Calls())
	}
	if cut == nil || cut.FullText() != cut.Shown || cut.Tool != "shell_command" && cut.Tool != "exec_command" && cut.Tool != "shell" {
		t.Errorf("Codex's cut output: %+v", cut)
	}
}

// TestSupply fills in what a format leaves out, keeps what it recorded,
// and rewrites the caveat accordingly.
func TestSupply(t *testing.T) {
	tools, err := ParseToolSpecs([]byte(`[{"name":"Bash","description":"run","input_schema":{"type":"object"}},{"type":"function","function":{"name":"Read","parameters":{"type":"object"}}},{"name":"mcp_x","inputSchema":{"type":"object"}}]`))
	if err != nil || len(tools) != 3 || tools[1].Name != "Read" || string(tools[2].InputSchema) != `{"type":"object"}` {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	if _, err := ParseToolSpecs([]byte(`[{"description":"no name"}]`)); err == nil {
		t.Error("a tool without a name was accepted")
	}
	load := func(file string, s *Supply) *Recording {
		t.Helper()
		recs, skipped, err := LoadWith(t.Context(), s, filepath.Join("testdata", file))
		if err != nil || len(skipped) > 0 || len(recs) == 0 {
			t.Fatalf("%v %v", err, skipped)
		}
		return recs[0]
	}
	cc := "claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl"
	for _, tc := range []struct {
		name   string
		file   string
		supply *Supply
		system string
		tools  int
		want   []string
		absent string
	}{
		{"none", cc, nil, "", 0, []string{"the system prompt and the tool schemas"}, "supplied"},
		{"both", cc, &Supply{System: "You are Claude Code.", Tools: tools}, "You are Claude Code.", 3, []string{"system prompt supplied", "tool schemas supplied by the user (3 tools)"}, notRecordedPrefix},
		{"size", cc, &Supply{SystemTokens: 12_000}, "[stand-in", 0, []string{"a stand-in of about 12000 tokens", "not recorded by claude-code: the tool schemas"}, "the system prompt and"},
		{"recorded wins", "codex/rollout-2026-02-04T21-29-45-019c2a58-c0cc-7860-b9ca-7e2dcda03ddb.jsonl", &Supply{System: "mine"}, "You are Codex", 0, []string{"supplied system prompt was not used"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := load(tc.file, tc.supply)
			all := strings.Join(rec.Warnings, "\n")
			if !strings.HasPrefix(rec.System, tc.system) || len(rec.Tools) != tc.tools {
				t.Errorf("system %.30q, %d tools", rec.System, len(rec.Tools))
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no %q in:\n%s", w, all)
				}
			}
			if tc.absent != "" && strings.Contains(all, tc.absent) {
				t.Errorf("%q still in:\n%s", tc.absent, all)
			}
		})
	}
}

// TestStandInSystem counts the stand-in with the real tokenizer.
func TestStandInSystem(t *testing.T) {
	c, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{50, 3_000, 20_000} {
		if got := c.Count(standInSystem(n)); got < n*98/100 || got > n*102/100 {
			t.Errorf("standInSystem(%d) counts %d tokens", n, got)
		}
	}
}

// TestPartialLastLine: a session still being written ends mid-line; the
// complete lines import and a warning says the last was left out. A bad
// line anywhere else is an error at its position.
func TestPartialLastLine(t *testing.T) {
	data, err := os.ReadFile("testdata/claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	live := append(append([]byte{}, data...), []byte(`{"type":"assistant","message":{"id":"m`)...)
	rec, err := Parse("live.jsonl", live)
	if err != nil || !strings.Contains(strings.Join(rec.Warnings, "\n"), "last line is incomplete") || rec.Calls() != 8 {
		t.Fatalf("%v", err)
	}
	if _, err := Parse("title.jsonl", []byte(`{"type":"summary","summary":"t","leafUuid":"x"}`)); !errors.Is(err, ErrNoModelCall) {
		t.Errorf("a session with no model call: %v", err)
	}
	broken := append([]byte(`{"type":"user","sessionId":"s","message":{`+"\n"), data...)
	if _, err := Parse("broken.jsonl", broken); err == nil || !strings.Contains(err.Error(), "broken.jsonl:") || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("a broken first line: %v", err)
	}
}

// TestSniff names each format by content alone, whatever the file is
// called.
func TestSniff(t *testing.T) {
	for file, want := range map[string]string{
		"claude-code/155715ec-f4e9-47ea-859c-2e4cfcceab6f.jsonl":                       formatClaudeCode,
		"claude-code/subagents.json":                                                   formatClaudeCode,
		"claude-code/output-stream-json.jsonl":                                         formatClaudeCode,
		"claude-code/output-json.json":                                                 formatClaudeCode,
		"codex/exec-json.jsonl":                                                        formatCodex,
		"opencode/run-json.jsonl":                                                      formatOpencode,
		"codex/rollout-2025-11-24T12-54-04-019ab737-4612-7f91-bf54-c6a3b3870ee6.jsonl": formatCodex,
		"codex/rollout-2025-08-30T12-52-41-9aa0221f-be4a-424a-8633-55496d1e2dc3.jsonl": formatCodex,
		"swe-agent/demo__function_calling_simple.traj":                                 formatSWEAgent,
		"gemini-cli/trajectory.json":                                                   formatGeminiCLI,
		"gemini-cli/session-2026-04-06T10-00-hand.json":                                formatGeminiCLI,
		"gemini-cli/session-2026-12-02T04-05-62a661cc.jsonl":                           formatGeminiCLI,
		"gemini-cli/output-stream-json.jsonl":                                          formatGeminiCLI,
		"gemini-cli/output-json.json":                                                  formatGeminiCLI,
		"openhands/trajectory.json":                                                    formatOpenHands,
		"openhands/output.jsonl":                                                       formatOpenHands,
		"openhands/output-sdk.jsonl":                                                   formatOpenHands,
		"chat.json":                                                                    "",
		"chat.jsonl":                                                                   "",
		"pydicom-trimmed.traj.json":                                                    "",
		"conversation.json":                                                            "",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sniff(data); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
		// Renamed, a file imports the same.
		if want != "" {
			rec, err := Parse("renamed.dat", data)
			if err != nil || rec.Format != want {
				t.Errorf("%s renamed: %v", file, err)
			}
		}
	}
}

// TestAnthropicMessages checks what a list of Anthropic Messages API
// messages maps to: tool_use blocks are calls (arguments as sent),
// tool_result blocks their results (an error flagged, an image kept as an
// image), the text of a user message that answers calls a turn of its
// own; a request body's system blocks, tools and each answer's usage
// beside it are read.
func TestAnthropicMessages(t *testing.T) {
	rec, err := ParseFile("testdata/anthropic/messages.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || !strings.HasPrefix(rec.Turns[0].Input, "The login test fails") || !strings.Contains(rec.Turns[1].Input, "<environment_details>") {
		t.Fatalf("turns %d: %+v", len(rec.Turns), rec.Turns)
	}
	first := rec.Turns[0].Calls[0]
	if tc := first.Assistant.ToolCalls; len(tc) != 1 || tc[0].Name != "execute_command" || string(tc[0].Args) != `{"command":"go test ./auth -run TestLogin"}` {
		t.Errorf("first call %+v", tc)
	}
	if r := first.Results[0]; !r.IsError || !strings.Contains(r.FullText(), "want 200") || r.Tool != "execute_command" {
		t.Errorf("first result %+v", r)
	}
	second := rec.Turns[0].Calls[1]
	if len(second.Results) != 2 || second.Results[1].Full[0].Type != harness.PartImage || len(second.Results[1].Full[0].Data) == 0 {
		t.Errorf("the screenshot's result %+v", second.Results)
	}

	req, err := ParseFile("testdata/anthropic/request.json")
	if err != nil {
		t.Fatal(err)
	}
	if req.System != "You are a coding agent working in a Go repository.\n\nAnswer briefly." || len(req.Tools) != 1 || req.Tools[0].Name != "bash" {
		t.Errorf("system %q, tools %+v", req.System, req.Tools)
	}
	c := req.Turns[0].Calls[1]
	if !c.HasUsage || c.Usage.Input != 352 || c.Usage.Cached != 312 || c.Usage.Output != 6 {
		t.Errorf("usage %+v (has %v)", c.Usage, c.HasUsage)
	}
	for _, w := range req.Warnings {
		if strings.Contains(w, "not recorded") {
			t.Errorf("a request body with system and tools warns %q", w)
		}
	}
	if _, err := Parse("bad.json", []byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"?"}]}]`)); err == nil || !strings.Contains(err.Error(), `"t2"`) {
		t.Errorf("a result for no call: %v", err)
	}
}

// TestResponsesItems checks what a Responses API input list maps to: the
// developer message before the first response is the system prompt, a
// response's reasoning and calls one model call, outputs paired by call_id
// whatever their order, each user message a turn; a request body's
// instructions and named tools are read.
func TestResponsesItems(t *testing.T) {
	rec, err := ParseFile("testdata/responses/items.json")
	if err != nil {
		t.Fatal(err)
	}
	if rec.System != "You are a coding agent. Use the shell." || len(rec.Turns) != 2 || rec.Turns[1].Input != "Remove it." {
		t.Fatalf("system %q, turns %+v", rec.System, rec.Turns)
	}
	first := rec.Turns[0].Calls[0]
	if len(first.Assistant.ToolCalls) != 2 || len(first.Results) != 2 || first.Results[0].CallID != "call_01" || !strings.Contains(first.Results[0].FullText(), "unreachable code") {
		t.Errorf("first call %+v, results %+v", first.Assistant.ToolCalls, first.Results)
	}
	if got := rec.Turns[0].Calls[1].Assistant.Text(); got != "store/db.go:41 has unreachable code after a return." {
		t.Errorf("answer %q", got)
	}
	req, err := ParseFile("testdata/responses/request.json")
	if err != nil {
		t.Fatal(err)
	}
	if req.System != "You are a coding agent." || len(req.Tools) != 1 || req.Tools[0].Name != "shell" {
		t.Errorf("system %q, tools %+v", req.System, req.Tools)
	}
	// A chat list that merely has typed messages stays a chat list.
	chat, err := Parse("typed.json", []byte(`[{"type":"message","role":"user","content":"hi"},{"type":"message","role":"assistant","content":"hello"}]`))
	if err != nil || chat.Format != formatOpenAI {
		t.Errorf("typed messages: %v, %+v", err, chat)
	}
}

// TestMiniSWETextActions: a mini-swe-agent-1 reply's one ```bash block is
// a bash call answered by the next user message; a reply with two blocks
// is no call, and the format error after it is a user input.
func TestMiniSWETextActions(t *testing.T) {
	rec, err := ParseFile("testdata/mini-swe-agent-1/calc__add-1.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || !strings.HasPrefix(rec.Turns[1].Input, "Please always provide EXACTLY ONE action") {
		t.Fatalf("turns %+v", rec.Turns)
	}
	ls := rec.Turns[0].Calls[0]
	if len(ls.Assistant.ToolCalls) != 1 || string(ls.Assistant.ToolCalls[0].Args) != `{"command":"ls"}` || !strings.Contains(ls.Results[0].FullText(), "test_calc.py") {
		t.Errorf("ls: %+v", ls)
	}
	if twice := rec.Turns[0].Calls[1]; len(twice.Assistant.ToolCalls) != 0 {
		t.Errorf("a reply with two actions made calls %+v", twice.Assistant.ToolCalls)
	}
	if cat := rec.Turns[1].Calls[0]; len(cat.Results) != 1 || !strings.Contains(cat.Results[0].FullText(), "return a - b") {
		t.Errorf("cat: %+v", cat)
	}
}

// TestMiniSWE2TextActions: mini-swe-agent 2 without tool calls lists each
// reply's parsed action under extra.actions (whatever its pattern), keeps
// the command's whole output beside its shown observation, and stores no
// assistant message for a reply it could not parse: the format error that
// quotes it stands for that model call.
func TestMiniSWE2TextActions(t *testing.T) {
	rec, err := ParseFile("testdata/mini-swe-agent-2/calc__add-2.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || !strings.HasPrefix(rec.Turns[1].Input, "Please always provide EXACTLY ONE action") {
		t.Fatalf("turns %+v", rec.Turns)
	}
	first := rec.Turns[0].Calls
	if len(first) != 2 || string(first[0].Assistant.ToolCalls[0].Args) != `{"command":"ls"}` || first[0].Usage.Input != 410 {
		t.Fatalf("first turn %+v", first)
	}
	if un := first[1]; len(un.Assistant.ToolCalls) != 0 || un.HasUsage || !strings.Contains(un.Assistant.Text(), "cat test_calc.py") {
		t.Errorf("the unparsed reply %+v", un)
	}
	values := rec.Turns[1].Calls[0]
	full := values.Results[0].FullText()
	if !strings.Contains(full, "line 280: value 1960") || !strings.HasPrefix(full, "<returncode>0</returncode>\n") || strings.Contains(full, "<warning>") {
		t.Errorf("the cut output's whole text: %.200q", full)
	}
	if len(values.Results[0].Shown) >= len(full) {
		t.Errorf("shown %d chars, whole %d", len(values.Results[0].Shown), len(full))
	}
}

// TestMiniSWEActionPatterns: without extra.actions, a reply's action is its
// one block in any of mini-swe-agent's default patterns; two blocks, or an
// extra listing two actions, are a format error and no call.
func TestMiniSWEActionPatterns(t *testing.T) {
	for _, tc := range []struct {
		name, content, actions, want string
	}{
		{"v1 bash block", "THOUGHT: x\n\n```bash\nls -la\n```", "", "ls -la"},
		{"v2 text block", "THOUGHT: x\n\n```mswea_bash_command\ncat a.py\n```", "", "cat a.py"},
		{"v2 xml element", "THOUGHT: x\n\n<mswea_bash_command>grep -n foo b.py</mswea_bash_command>", "", "grep -n foo b.py"},
		{"listed action wins", "THOUGHT: x\n\n<run>make</run>", `[{"command":"make test"}]`, "make test"},
		{"two blocks", "```bash\nls\n```\n```bash\npwd\n```", "", ""},
		{"two listed actions", "x", `[{"command":"ls"},{"command":"pwd"}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, _ := json.Marshal(tc.content)
			extra := ""
			if tc.actions != "" {
				extra = `,"extra":{"actions":` + tc.actions + `}`
			}
			data := `{"trajectory_format":"mini-swe-agent-1","messages":[{"role":"user","content":"task"},{"role":"assistant","content":` + string(content) + extra + `},{"role":"user","content":"<returncode>0</returncode>"}]}`
			rec, err := Parse("t.traj.json", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			calls := rec.Turns[0].Calls[0].Assistant.ToolCalls
			got := ""
			if len(calls) == 1 {
				var a struct{ Command string }
				_ = json.Unmarshal(calls[0].Args, &a)
				got = a.Command
			}
			if got != tc.want || len(calls) > 1 {
				t.Errorf("command %q (%d calls), want %q", got, len(calls), tc.want)
			}
		})
	}
}

// TestMiniSWEResponses: mini-swe-agent on the Responses API records whole
// response objects and function_call_output items; each response is one
// model call with its usage, each output pairs by call_id with the
// command's whole output, and a format error's quoted response is a call.
func TestMiniSWEResponses(t *testing.T) {
	rec, err := ParseFile("testdata/mini-swe-agent-2/calc__add-3.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rec.System, "You are a helpful assistant") || len(rec.Tools) != 1 {
		t.Errorf("system %q, %d tools", rec.System, len(rec.Tools))
	}
	var calls []*Call
	for _, turn := range rec.Turns {
		calls = append(calls, turn.Calls...)
	}
	first := calls[0]
	if len(first.Assistant.ToolCalls) != 2 || first.Assistant.Text() != "Let me look at the files and the values." ||
		first.Usage != (harness.Usage{Input: 900, Output: 120}) || len(first.Results) != 2 {
		t.Fatalf("first call %+v", first)
	}
	if r := first.Results[1]; r.CallID != "call_2" || !strings.Contains(r.FullText(), "line 280: value 1960") || len(r.Shown) >= len(r.FullText()) {
		t.Errorf("the cut output %q: shown %d, whole %d", r.CallID, len(r.Shown), len(r.FullText()))
	}
	if quoted := calls[1]; len(quoted.Assistant.ToolCalls) != 0 || quoted.Usage.Cached != 800 {
		t.Errorf("the format error's response %+v", quoted)
	}
	if len(rec.Turns) != 2 || !strings.HasPrefix(rec.Turns[1].Input, "Format error:") {
		t.Errorf("turns %d, second %q", len(rec.Turns), rec.Turns[len(rec.Turns)-1].Input)
	}
}

// TestOpenHands checks what OpenHands events map to: the actions of one
// model response are one call with that response's tool calls, text and
// usage, each observation the result of its action's call (an exit code
// other than 0 an error); an evaluation's output.jsonl is one recording
// per instance, an action without tool_call_metadata a call of its own.
func TestOpenHands(t *testing.T) {
	data, err := os.ReadFile("testdata/openhands/output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ParseAll("output.jsonl", data)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	fc, plain := recs[0], recs[1]
	if fc.ID != "calc__add-1" || plain.ID != "count__files-2" || len(fc.Tools) != 3 || !strings.HasPrefix(fc.System, "You are OpenHands agent") {
		t.Errorf("ids %q %q, %d tools, system %q", fc.ID, plain.ID, len(fc.Tools), fc.System)
	}
	first := fc.Turns[0].Calls[0]
	if len(first.Assistant.ToolCalls) != 2 || first.Assistant.Text() != "Let me look at the failing test and the source." ||
		first.Usage.Input != 1200 || first.Usage.Cached != 1000 || len(first.Results) != 2 {
		t.Fatalf("first call %+v", first)
	}
	if r := first.Results[0]; r.CallID != "toolu_1" || !r.IsError || !strings.Contains(r.FullText(), "assert 0 == 4") {
		t.Errorf("the test run's result %+v", r)
	}
	var edit struct {
		NewStr string `json:"new_str"`
	}
	if tc := fc.Turns[0].Calls[1].Assistant.ToolCalls[0]; tc.Name != "str_replace_editor" || json.Unmarshal(tc.Args, &edit) != nil || edit.NewStr != "return a + b" {
		t.Errorf("the edit %s %s", tc.Name, tc.Args)
	}
	if len(plain.Turns[0].Calls) != 2 || plain.Turns[0].Calls[0].Assistant.ToolCalls[0].Name != "run" ||
		plain.Turns[0].Calls[0].Results[0].FullText() != "3\n" || plain.Turns[0].Calls[1].Assistant.Text() != "There are 3 Python files." {
		t.Errorf("the instance without tool_call_metadata: %+v", plain.Turns[0].Calls)
	}
	if plain.Model != "gpt-4o" {
		t.Errorf("the instance's model %q, want its metadata's llm_config.model", plain.Model)
	}
	if w := strings.Join(plain.Warnings, "\n"); !strings.Contains(w, "2 actions carry no model response") || !strings.Contains(w, "no usage recorded") {
		t.Errorf("warnings %s", w)
	}

	// The agent SDK's events: the ActionEvents of one llm_response_id are
	// one call; a rejection answers its call as an error.
	sdk, err := ParseFile("testdata/openhands/output-sdk.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	calls := sdk.Turns[0].Calls
	if sdk.System != "You are OpenHands agent." || len(sdk.Tools) != 2 || len(calls) != 3 || len(calls[0].Assistant.ToolCalls) != 2 ||
		calls[0].Assistant.Text() != "Run the tests, and read the code." || !strings.Contains(calls[0].Results[0].FullText(), "AssertionError") {
		t.Fatalf("sdk: system %q, %d tools, calls %+v", sdk.System, len(sdk.Tools), calls)
	}
	if r := calls[1].Results[0]; !r.IsError || r.FullText() != "Action rejected: Not this way" {
		t.Errorf("the rejected edit's result %+v", r)
	}
	if !strings.HasPrefix(calls[2].Assistant.Text(), "The edit was rejected") {
		t.Errorf("the closing message %q", calls[2].Assistant.Text())
	}
}

// TestClaudeCodeStreamJSONSubagent: in claude -p's stream-json output a
// subagent's messages (parent_tool_use_id set) are a recording of their
// own, named by the Task call that started it, apart from the main chain.
func TestClaudeCodeStreamJSONSubagent(t *testing.T) {
	line := func(typ, parent, uuid, content string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		role := typ
		return `{"type":"` + typ + `","message":{"id":"m_` + uuid + `","role":"` + role + `","model":"claude-sonnet-4-5","content":` + content + `},"parent_tool_use_id":` + p + `,"session_id":"s1","uuid":"` + uuid + `"}`
	}
	data := strings.Join([]string{
		`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":["Task","Bash"]}`,
		line("assistant", "", "u1", `[{"type":"tool_use","id":"toolu_task","name":"Task","input":{"prompt":"count files"}}]`),
		line("user", "toolu_task", "u2", `[{"type":"text","text":"count files"}]`),
		line("assistant", "toolu_task", "u3", `[{"type":"tool_use","id":"toolu_ls","name":"Bash","input":{"command":"ls | wc -l"}}]`),
		line("user", "toolu_task", "u4", `[{"type":"tool_result","tool_use_id":"toolu_ls","content":"3"}]`),
		line("assistant", "toolu_task", "u5", `[{"type":"text","text":"3 files"}]`),
		line("user", "", "u6", `[{"type":"tool_result","tool_use_id":"toolu_task","content":"3 files"}]`),
		line("assistant", "", "u7", `[{"type":"text","text":"There are 3 files."}]`),
		`{"type":"result","subtype":"success","result":"There are 3 files.","session_id":"s1","usage":{"input_tokens":10,"output_tokens":5}}`,
	}, "\n")
	recs, err := ParseAll("out.jsonl", []byte(data))
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d recordings, %v", len(recs), err)
	}
	main, sub := recs[0], recs[1]
	if main.ID != "s1" || sub.ID != "s1/agent-toolu_task" || main.Calls() != 2 || sub.Calls() != 2 {
		t.Fatalf("main %q (%d calls), subagent %q (%d calls)", main.ID, main.Calls(), sub.ID, sub.Calls())
	}
	if r := sub.Turns[0].Calls[0].Results; len(r) != 1 || r[0].FullText() != "3" || sub.Turns[0].Input != "count files" {
		t.Errorf("subagent: input %q, results %+v", sub.Turns[0].Input, r)
	}
}

// TestCodexExecItems: codex exec --json's file changes and MCP calls are
// calls of apply_patch and of the server's tool, answered by their status
// and result; a turn.started starts a turn.
func TestCodexExecItems(t *testing.T) {
	data := strings.Join([]string{
		`{"type":"thread.started","thread_id":"th1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning**"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Editing main.go."}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"main.go","kind":"update"}],"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"zod"},"result":{"content":[{"type":"text","text":"zod 3.23"}]},"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"Done."}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_5","type":"command_execution","command":"go test ./...","aggregated_output":"FAIL","exit_code":1,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"The tests fail."}}`,
	}, "\n")
	rec, err := Parse("exec.jsonl", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "th1" || len(rec.Turns) != 2 || rec.Calls() != 5 {
		t.Fatalf("id %q, %d turns, %d calls", rec.ID, len(rec.Turns), rec.Calls())
	}
	edit, mcp := rec.Turns[0].Calls[0], rec.Turns[0].Calls[1]
	if edit.Assistant.Text() != "Editing main.go." || edit.Assistant.ToolCalls[0].Name != "apply_patch" || edit.Results[0].FullText() != "completed" {
		t.Errorf("the file change %+v", edit)
	}
	if mcp.Assistant.ToolCalls[0].Name != "mcp__docs__search" || string(mcp.Assistant.ToolCalls[0].Args) != `{"q":"zod"}` || mcp.Results[0].FullText() != "zod 3.23" {
		t.Errorf("the MCP call %+v", mcp)
	}
	if run := rec.Turns[1].Calls[0]; !run.Results[0].IsError || run.Results[0].FullText() != "FAIL" {
		t.Errorf("the failed command %+v", run.Results[0])
	}
	if w := strings.Join(rec.Warnings, "\n"); !strings.Contains(w, "1 reasoning items left out") {
		t.Errorf("warnings %s", w)
	}
}

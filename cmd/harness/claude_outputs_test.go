package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestClaudeCodeOutputsImport runs the real Claude Code against a loopback
// Anthropic upstream (one Bash call, then the answer) with -p and
// --output-format stream-json and json, and checks that harness bench and
// harness audit import what it printed, each with the warning that says
// what the format does not record.
func TestClaudeCodeOutputsImport(t *testing.T) {
	bin := clientBin(t, "claude")
	for _, tc := range []struct {
		format string
		args   []string
		warn   string
	}{
		{"stream-json", []string{"--output-format", "stream-json", "--verbose"}, "stream-json output records the calls and their results"},
		{"json", []string{"--output-format", "json"}, "json output records only the final answer"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			up := wiretest.New(t)
			up.Respond = func(req wiretest.Request) wiretest.Reply {
				if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
					return notModelCall(req)
				}
				m := bodyJSON(t, req.Body)
				model, _ := m["model"].(string)
				u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
				if tools, _ := m["tools"].([]any); len(tools) == 0 {
					return wiretest.AnthropicStream(model, "ok", nil, u)
				}
				if !strings.Contains(string(req.Body), `"type":"tool_result"`) {
					return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "Bash", Args: `{"command":"cat package.json","description":"Read the manifest"}`}}, u)
				}
				return wiretest.AnthropicStream(model, outputAnswer, nil, u)
			}
			args := append([]string{"-p", "Which version of zod does package.json ask for? Read it with cat.", "--allowedTools", "Bash(cat:*)"}, tc.args...)
			out := runClient(t, outputWorkspace(t), []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + up.URL, "ANTHROPIC_API_KEY=sk-test-claude-output",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}, bin, args...)
			if !strings.Contains(out, "zod ^3.23.0") {
				t.Fatalf("claude did not give the scripted answer:\n%s", tail(out, 2000))
			}
			checkOutputImports(t, out, tc.warn)
		})
	}
}

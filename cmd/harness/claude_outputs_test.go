package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
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
	const answer = "package.json asks for zod ^3.23.0."
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
				return wiretest.AnthropicStream(model, answer, nil, u)
			}
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"app","dependencies":{"zod":"^3.23.0"}}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-p", "Which version of zod does package.json ask for? Read it with cat.", "--allowedTools", "Bash(cat:*)"}, tc.args...)
			out := runClient(t, work, []string{"HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + up.URL, "ANTHROPIC_API_KEY=sk-test-claude-output",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}, bin, args...)
			if !strings.Contains(out, "zod ^3.23.0") {
				t.Fatalf("claude did not give the scripted answer:\n%s", tail(out, 2000))
			}
			file := filepath.Join(t.TempDir(), "claude-output")
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if d := os.Getenv("HARNESS_KEEP_OUTPUT"); d != "" {
				os.WriteFile(filepath.Join(d, "claude-"+tc.format), []byte(out), 0o644)
			}
			for _, cmd := range []string{"bench", "audit"} {
				var stdout, stderr bytes.Buffer
				if code := runMain(context.Background(), []string{cmd, file}, &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}); code != 0 {
					t.Fatalf("harness %s exited %d:\n%s", cmd, code, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.warn) || strings.Contains(stderr.String(), "skipped") {
					t.Errorf("harness %s: want the warning %q and nothing skipped:\n%s", cmd, tc.warn, stderr.String())
				}
				if !strings.Contains(stdout.String(), "harness") {
					t.Errorf("harness %s printed no table:\n%s", cmd, stdout.String())
				}
			}
		})
	}
}

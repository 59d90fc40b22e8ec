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

// TestOpencodeRunJSONImport runs the real opencode's opencode run --format
// json against a loopback Anthropic upstream (one bash call, then the
// answer) and checks that harness bench and harness audit import what it
// printed, with the warning that says what the format does not record.
func TestOpencodeRunJSONImport(t *testing.T) {
	bin := clientBin(t, "opencode")
	const answer = "package.json asks for zod ^3.23.0."
	up := wiretest.New(t)
	up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Cached: len(req.Body) / 8, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "Zod version", nil, u)
		}
		if !strings.Contains(string(req.Body), `"type":"tool_result"`) {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "bash", Args: `{"command":"cat package.json","description":"Read the manifest"}`}}, u)
		}
		return wiretest.AnthropicStream(model, answer, nil, u)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"app","dependencies":{"zod":"^3.23.0"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := opencodeEnv(t.TempDir(), "anthropic", up.URL, "sk-test-opencode-output", "")
	out := runClient(t, work, vars, bin, "run", "--format", "json", "Which version of zod does package.json ask for? Read it with cat.")
	if !strings.Contains(out, "zod ^3.23.0") {
		t.Fatalf("opencode did not give the scripted answer:\n%s", tail(out, 2000))
	}
	if d := os.Getenv("HARNESS_KEEP_OUTPUT"); d != "" {
		os.WriteFile(filepath.Join(d, "opencode-run-json"), []byte(out), 0o644)
	}
	file := filepath.Join(t.TempDir(), "opencode-output")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"bench", "audit"} {
		var stdout, stderr bytes.Buffer
		if code := runMain(context.Background(), []string{cmd, file}, &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("harness %s exited %d:\n%s", cmd, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "opencode run --format json output records") || strings.Contains(stderr.String(), "skipped") {
			t.Errorf("harness %s: want the output's warning and nothing skipped:\n%s", cmd, stderr.String())
		}
		if !strings.Contains(stdout.String(), "harness") {
			t.Errorf("harness %s printed no table:\n%s", cmd, stdout.String())
		}
	}
}

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

// TestCodexExecJSONImport runs the real Codex CLI's codex exec --json
// against a loopback Responses upstream (one shell call, then the answer)
// and checks that harness bench and harness audit import what it printed,
// with the warning that says what the format does not record.
func TestCodexExecJSONImport(t *testing.T) {
	bin := clientBin(t, "codex")
	const answer = "package.json asks for zod ^3.23.0."
	up := wiretest.New(t)
	up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/responses") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if !strings.Contains(string(req.Body), `"type":"function_call_output"`) {
			return wiretest.ResponsesStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "exec_command", Args: `{"cmd":"cat package.json"}`}}, u)
		}
		return wiretest.ResponsesStream(model, answer, nil, u)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"app","dependencies":{"zod":"^3.23.0"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	codexHome := newCodexHome(t, up.URL, "", "")
	out := runClient(t, work, []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome, "FAKE_API_KEY=sk-test-codex-output"},
		bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Which version of zod does package.json ask for? Read it with cat.")
	if !strings.Contains(out, "zod ^3.23.0") {
		t.Fatalf("codex did not give the scripted answer:\n%s", tail(out, 2000))
	}
	if d := os.Getenv("HARNESS_KEEP_OUTPUT"); d != "" {
		os.WriteFile(filepath.Join(d, "codex-exec-json"), []byte(out), 0o644)
	}
	file := filepath.Join(t.TempDir(), "codex-output")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"bench", "audit"} {
		var stdout, stderr bytes.Buffer
		if code := runMain(context.Background(), []string{cmd, file}, &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("harness %s exited %d:\n%s", cmd, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "codex exec --json output records the commands") || strings.Contains(stderr.String(), "skipped") {
			t.Errorf("harness %s: want the output's warning and nothing skipped:\n%s", cmd, stderr.String())
		}
		if !strings.Contains(stdout.String(), "harness") {
			t.Errorf("harness %s printed no table:\n%s", cmd, stdout.String())
		}
	}
}

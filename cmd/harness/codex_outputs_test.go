package main

import (
	"net/http"
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
		return wiretest.ResponsesStream(model, outputAnswer, nil, u)
	}
	codexHome := newCodexHome(t, up.URL, "", "")
	out := runClient(t, outputWorkspace(t), []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome, "FAKE_API_KEY=sk-test-codex-output"},
		bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Which version of zod does package.json ask for? Read it with cat.")
	if !strings.Contains(out, "zod ^3.23.0") {
		t.Fatalf("codex did not give the scripted answer:\n%s", tail(out, 2000))
	}
	checkOutputImports(t, out, "codex exec --json output records the commands")
}

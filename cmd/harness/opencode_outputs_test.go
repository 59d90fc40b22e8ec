package main

import (
	"net/http"
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
		return wiretest.AnthropicStream(model, outputAnswer, nil, u)
	}
	vars := opencodeEnv(t.TempDir(), "anthropic", up.URL, "sk-test-opencode-output", "")
	out := runClient(t, outputWorkspace(t), vars, bin, "run", "--format", "json", "Which version of zod does package.json ask for? Read it with cat.")
	if !strings.Contains(out, "zod ^3.23.0") {
		t.Fatalf("opencode did not give the scripted answer:\n%s", tail(out, 2000))
	}
	checkOutputImports(t, out, "opencode run --format json output records")
}

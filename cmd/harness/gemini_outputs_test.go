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

// TestGeminiCLIOutputsImport runs the real Gemini CLI against a loopback
// Gemini upstream (one run_shell_command call, then the answer) with
// --output-format stream-json and json, and checks that harness bench
// and harness audit import what it printed, each with the warning that
// says what the format does not record.
func TestGeminiCLIOutputsImport(t *testing.T) {
	bin := clientBin(t, "gemini")
	for _, tc := range []struct{ format, warn string }{
		{"stream-json", "stream-json output records the prompt, the calls, their results"},
		{"json", "json output records only the final answer"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			up := wiretest.New(t)
			up.Respond = func(req wiretest.Request) wiretest.Reply {
				if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") {
					return notModelCall(req)
				}
				model := geminiPathModel(req.Path)
				u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
				switch {
				case strings.HasSuffix(req.Path, ":generateContent"):
					return geminiRouterReply(u)
				case !strings.Contains(string(req.Body), `"functionResponse"`):
					return wiretest.GeminiStream(model, "", []wiretest.Call{{ID: "call_pkg", Name: "run_shell_command", Args: `{"command":"cat package.json"}`}}, u)
				}
				return wiretest.GeminiStream(model, outputAnswer, nil, u)
			}
			work := outputWorkspace(t)
			home := newGeminiHome(t, "")
			out := runClient(t, work, []string{"HOME=" + home, "GEMINI_API_KEY=sk-test-gemini-output", "GOOGLE_GEMINI_BASE_URL=" + up.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
				bin, "-p", "Which version of zod does package.json ask for? Read it with cat.", "--yolo", "--skip-trust", "-o", tc.format)
			if !strings.Contains(out, "zod ^3.23.0") {
				t.Fatalf("gemini did not give the scripted answer:\n%s", tail(out, 2000))
			}
			checkOutputImports(t, out, tc.warn)
		})
	}
}

// outputAnswer is what the scripted upstreams of the output tests answer:
// what outputWorkspace's package.json asks for.
const outputAnswer = "package.json asks for zod ^3.23.0."

// outputWorkspace is a folder holding the package.json the output tests'
// agents read with cat.
func outputWorkspace(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"name":"app","dependencies":{"zod":"^3.23.0"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work
}

// checkOutputImports saves what a client printed to a file and checks that
// harness bench and harness audit import it, skipping nothing, print a
// table and warn what the format does not record (warn).
func checkOutputImports(t *testing.T, out, warn string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "client-output")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"bench", "audit"} {
		var stdout, stderr bytes.Buffer
		if code := runMain(context.Background(), []string{cmd, file}, &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("harness %s exited %d:\n%s", cmd, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), warn) || strings.Contains(stderr.String(), "skipped") {
			t.Errorf("harness %s: want the warning %q and nothing skipped:\n%s", cmd, warn, stderr.String())
		}
		if !strings.Contains(stdout.String(), "harness") {
			t.Errorf("harness %s printed no table:\n%s", cmd, stdout.String())
		}
	}
}

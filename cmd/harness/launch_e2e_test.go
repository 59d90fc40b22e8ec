package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// launchPage is what a launcher test's scripted model did: the spill file
// the proxy's marker named, and the line it asked the client to read.
type launchPage struct {
	mu         sync.Mutex
	spill      string
	line       int
	want       string
	markerSeen string
}

// next decides the scripted model's step from the tool results in its
// request: read the lock file (cut and spilled by the proxy), then page
// the spill file with the client's own read tool at a line the cut hid,
// then answer.
func (lp *launchPage) next(t *testing.T, body []byte, results int, readLock, readSpill func(path string, line int) wiretest.Reply, answer func() wiretest.Reply) wiretest.Reply {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	switch results {
	case 0:
		return readLock("", 0)
	case 1:
		m := e2eSpillRE.FindSubmatch(bytes.ReplaceAll(body, []byte(`\/`), []byte(`/`)))
		if m == nil {
			t.Errorf("the proxy's cut names no spill file in the request")
			return answer()
		}
		lp.spill = string(m[1])
		b, err := os.ReadFile(lp.spill)
		if err != nil {
			t.Errorf("reading the spill file: %v", err)
			return answer()
		}
		lines := strings.Split(string(b), "\n")
		lp.line = len(lines) / 2
		lp.want = strings.TrimSpace(lines[lp.line-1])
		if strings.Contains(string(body), lp.want) {
			t.Errorf("line %d of the spill (%q) was not hidden by the cut", lp.line, lp.want)
		}
		return readSpill(lp.spill, lp.line)
	}
	return answer()
}

// launchWork makes a git repository holding the lock file, and puts the
// pinned clients on PATH.
func launchWork(t *testing.T, bin string) string {
	t.Helper()
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "package-lock.json"), []byte(lockFileText()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(work)
	return work
}

// runLaunch runs "harness ARGS…" in-process as the launcher's user would,
// returning its exit code, standard output and standard error.
func runLaunch(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := runMain(ctx, args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
	return code, out.String(), errb.String()
}

// checkPaged asserts that the spill file is under root, that the client's
// read of it reached the model with the line the cut had hidden, and that
// git does not see .harness/ in the project work.
func (lp *launchPage) checkPaged(t *testing.T, work, root string, paged []string) {
	t.Helper()
	if lp.spill == "" {
		t.Fatal("the model never got a spill path")
	}
	if !strings.HasPrefix(lp.spill, root+string(filepath.Separator)) {
		t.Errorf("spill file %s is not under %s", lp.spill, root)
	}
	if len(paged) == 0 || !strings.Contains(paged[0], lp.want) {
		got := ""
		if len(paged) > 0 {
			got = tail(paged[0], 800)
		}
		t.Errorf("the client's read of %s at line %d did not return %q; it returned:\n%s", lp.spill, lp.line, lp.want, got)
	}
	out, err := exec.Command("git", "-C", work, "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v %s", err, out)
	}
	if strings.Contains(string(out), ".harness") {
		t.Errorf("git status shows harness's folder:\n%s", out)
	}
}

// TestLaunchClaudePagesSpill runs "harness claude -p …" from the
// project's folder with no other flag: Claude Code reads the lock file,
// the proxy cuts it and spills the rest under the project, and Claude
// Code's own Read pages the spill file with no permission denial.
func TestLaunchClaudePagesSpill(t *testing.T) {
	bin := clientBin(t, "claude")
	work := launchWork(t, bin)
	lp := &launchPage{}
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
		read := func(id, args string) wiretest.Reply {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: "Read", Args: args}}, u)
		}
		return lp.next(t, req.Body, strings.Count(string(req.Body), `"type":"tool_result"`),
			func(string, int) wiretest.Reply {
				return read("call_lock", `{"file_path":`+mustJSONString(filepath.Join(work, "package-lock.json"))+`,"limit":1200}`)
			},
			func(path string, line int) wiretest.Reply {
				return read("call_page", fmt.Sprintf(`{"file_path":%s,"offset":%d,"limit":3}`, mustJSONString(path), line))
			},
			func() wiretest.Reply { return wiretest.AnthropicStream(model, e2eAnswer, nil, u) })
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ANTHROPIC_BASE_URL", up.URL) // the user's own setting: the launcher's upstream
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-claude-launch")
	t.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	t.Setenv("DISABLE_AUTOUPDATER", "1")
	code, out, errb := runLaunch(t, "claude", "-p", "Read package-lock.json.", "--output-format", "json")
	if code != 0 {
		t.Fatalf("harness claude exited %d\nstdout:\n%s\nstderr:\n%s", code, tail(out, 2000), tail(errb, 2000))
	}
	var res struct {
		Result  string            `json:"result"`
		Denials []json.RawMessage `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil || !strings.Contains(res.Result, e2eAnswer) {
		t.Fatalf("claude answered %q (%v); output:\n%s", res.Result, err, tail(out, 2000))
	}
	if len(res.Denials) != 0 {
		t.Errorf("Claude Code denied %d tool calls: %s", len(res.Denials), res.Denials)
	}
	lp.checkPaged(t, work, work, launchResults(t, up.Requests(), anthropicResult("call_page")))
	if !strings.Contains(errb, "tokens of tool output removed") {
		t.Errorf("the launcher did not say what the run saved; stderr:\n%s", errb)
	}
}

// TestLaunchGeminiPagesSpill is TestLaunchClaudePagesSpill for "harness
// gemini -p …": Gemini CLI's read_file pages the spill file, which lies
// in its workspace and is not refused as ignored.
func TestLaunchGeminiPagesSpill(t *testing.T) {
	bin := clientBin(t, "gemini")
	work := launchWork(t, bin)
	lp := &launchPage{}
	up := wiretest.New(t)
	up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") {
			return notModelCall(req)
		}
		model := geminiPathModel(req.Path)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if strings.HasSuffix(req.Path, ":generateContent") {
			return geminiRouterReply(u)
		}
		read := func(id, args string) wiretest.Reply {
			return wiretest.GeminiStream(model, "", []wiretest.Call{{ID: id, Name: "read_file", Args: args}}, u)
		}
		return lp.next(t, req.Body, strings.Count(string(req.Body), `"functionResponse"`),
			func(string, int) wiretest.Reply { return read("call_lock", `{"file_path":"package-lock.json"}`) },
			func(path string, line int) wiretest.Reply {
				return read("call_page", fmt.Sprintf(`{"file_path":%s,"start_line":%d,"end_line":%d}`, mustJSONString(path), line, line+2))
			},
			func() wiretest.Reply { return wiretest.GeminiStream(model, e2eAnswer, nil, u) })
	}
	t.Setenv("HOME", newGeminiHome(t, ""))
	t.Setenv("GOOGLE_GEMINI_BASE_URL", up.URL)
	t.Setenv("GEMINI_API_KEY", "sk-test-gemini-launch")
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	code, out, errb := runLaunch(t, "gemini", "-p", "Read package-lock.json.", "--skip-trust", "-o", "json")
	if code != 0 {
		t.Fatalf("harness gemini exited %d\nstdout:\n%s\nstderr:\n%s", code, tail(out, 2000), tail(errb, 2000))
	}
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("gemini did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	// Gemini CLI refuses to read its project's git-ignored files, so the
	// launcher spills in the user's cache and adds that folder to its
	// workspace (--include-directories).
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	lp.checkPaged(t, work, filepath.Join(cache, "harness"), launchResults(t, up.Requests(), geminiResponse("call_page")))
}

// launchResults is the text of the results find finds in the model calls
// the upstream received.
func launchResults(t *testing.T, reqs []wiretest.Request, find func(map[string]any) (any, bool)) []string {
	t.Helper()
	var out []string
	for _, r := range reqs {
		if r.Method != http.MethodPost || !json.Valid(r.Body) {
			continue
		}
		if v, ok := find(bodyJSON(t, r.Body)); ok {
			s, _ := v.(string)
			out = append(out, s)
		}
	}
	return out
}

// TestLaunchCodexPagesSpill is TestLaunchClaudePagesSpill for "harness
// codex exec …" with Codex's built-in OpenAI provider: the launcher sets
// its base URL for the run (-c openai_base_url), the lock file read with
// the shell (its own cap raised by the user's config) is cut and spilled
// under the project, and Codex's shell pages the spill file with sed.
func TestLaunchCodexPagesSpill(t *testing.T) {
	bin := clientBin(t, "codex")
	work := launchWork(t, bin)
	lp := &launchPage{}
	up := wiretest.New(t)
	up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/responses") {
			return notModelCall(req)
		}
		model, _ := bodyJSON(t, req.Body)["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		shell := func(id, cmd string) wiretest.Reply {
			return wiretest.ResponsesStream(model, "", []wiretest.Call{{ID: id, Name: "exec_command", Args: `{"cmd":` + mustJSONString(cmd) + `,"max_output_tokens":100000}`}}, u)
		}
		return lp.next(t, req.Body, strings.Count(string(req.Body), `"type":"function_call_output"`),
			func(string, int) wiretest.Reply { return shell("call_lock", "cat package-lock.json") },
			func(path string, line int) wiretest.Reply {
				return shell("call_page", fmt.Sprintf("sed -n '%d,%dp' %s", line, line+2, path))
			},
			func() wiretest.Reply { return wiretest.ResponsesStream(model, e2eAnswer, nil, u) })
	}
	codexHome := t.TempDir()
	config := "model = \"gpt-test\"\ntool_output_token_limit = 100000\n\n[features]\nplugins = false\nremote_plugin = false\napps = false\n\n[analytics]\nenabled = false\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", codexHome)
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test-codex-launch")
	code, out, errb := runLaunch(t, "codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Read package-lock.json.")
	if code != 0 || !strings.Contains(out, e2eAnswer) {
		t.Fatalf("harness codex exited %d\nstdout:\n%s\nstderr:\n%s", code, tail(out, 2000), tail(errb, 2000))
	}
	lp.checkPaged(t, work, work, launchResults(t, up.Requests(), responsesOutput("call_page")))
}

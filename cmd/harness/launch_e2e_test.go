package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness/internal/wiretest"
)

// The launcher tests run "harness CLIENT …" as a user would, from the
// project folder (a git repository holding the 300 KB lock file), with the
// pinned client found on PATH and the client's own base URL pointing at a
// scripted loopback upstream. The script: read the lock file with the
// client's read tool (its result is over the ceiling, so the proxy
// spills it), then page the spill file the marker names with the same
// tool, then answer. The test checks that the model got the spill file's
// lines it asked for, with no permission denial or refusal.

// launchRig is a project folder, the scripted upstream and what the
// launched client printed.
type launchRig struct {
	work string
	lock string
	up   *wiretest.Server
}

// newLaunchRig makes the project folder (the test's working directory)
// and puts the pinned clients on PATH.
func newLaunchRig(t *testing.T, client string) *launchRig {
	t.Helper()
	bin := clientBin(t, client)
	r := &launchRig{work: t.TempDir(), lock: lockFileText()}
	for name, text := range map[string]string{"package-lock.json": r.lock, "package.json": `{"name":"app"}` + "\n"} {
		if err := os.WriteFile(filepath.Join(r.work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "-C", r.work, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	}
	t.Chdir(r.work)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"NO_COLOR=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "HARNESS_DB="} {
		kv := strings.SplitN(k, "=", 2)
		t.Setenv(kv[0], kv[1])
	}
	r.up = wiretest.New(t)
	return r
}

// run runs "harness args…" and returns its standard output.
func (r *launchRig) run(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
	if code != 0 {
		t.Fatalf("harness %s: exit %d\nstdout:\n%s\nstderr:\n%s", args[0], code, tail(out.String(), 3000), tail(errb.String(), 3000))
	}
	return out.String()
}

var launchSpillRE = regexp.MustCompile(`(/[^\s"\\]*/\.harness/spill/[^\s"\\]+\.txt)`)

// spillOf finds the spill file a request body's marker names.
func spillOf(body []byte) string {
	m := launchSpillRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// pageLines are the lines of the spill file the model asks for (1-based,
// inclusive).
const pageFrom, pageTo = 1001, 1010

// checkPaged checks what the launched client did: the spill file is in
// the project's .harness/spill/, git-ignored, the marker names the
// client's read tool, and the request after the page carried lines
// pageFrom..pageTo of the spill file, with no denial.
func (r *launchRig) checkPaged(t *testing.T, readTool string, result func(map[string]any) (any, bool)) {
	t.Helper()
	var spillPath, paged string
	for i, q := range r.up.Requests() {
		if d := os.Getenv("E2E_DUMP"); d != "" {
			_ = os.WriteFile(filepath.Join(d, readTool+strconv.Itoa(i)+".json"), q.Body, 0o644)
		}
		if strings.Contains(q.Path, "_harness") {
			t.Errorf("the upstream got the route prefix: %s", q.Path)
		}
		if p := spillOf(q.Body); p != "" && spillPath == "" {
			spillPath = p
			if !strings.Contains(string(q.Body), "your "+readTool+" tool") {
				t.Errorf("the marker does not name %s", readTool)
			}
		}
		if len(q.Body) == 0 {
			continue
		}
		if v, ok := result(bodyJSON(t, q.Body)); ok {
			paged, _ = v.(string)
		}
	}
	if spillPath == "" {
		t.Fatalf("no request named a spill file")
	}
	if want := filepath.Join(r.work, ".harness", "spill"); readTool != "read_file" && !strings.HasPrefix(spillPath, want) {
		t.Errorf("spill file %s is not under %s", spillPath, want)
	}
	b, err := os.ReadFile(spillPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < pageTo {
		t.Fatalf("the spill file has %d lines", len(lines))
	}
	for _, l := range lines[pageFrom-1 : pageTo] {
		if !strings.Contains(paged, strings.TrimSpace(l)) {
			t.Errorf("the page the model got lacks the spill file's line %q; it got:\n%s", l, tail(paged, 2000))
			break
		}
	}
	for _, bad := range []string{"permission", "denied", "not in workspace", "outside the allowed", "ignored"} {
		if strings.Contains(strings.ToLower(paged), bad) {
			t.Errorf("the page says %q:\n%s", bad, tail(paged, 2000))
		}
	}
	if out, err := exec.Command("git", "-C", r.work, "status", "--porcelain").Output(); err == nil && strings.Contains(string(out), ".harness") {
		t.Errorf("git status shows .harness:\n%s", out)
	}
}

// TestLaunchClaude: harness claude -p, no other flag, with an API key and
// signed in with a Claude subscription (an OAuth token in
// ~/.claude/.credentials.json, which Claude Code sends to
// ANTHROPIC_BASE_URL as a bearer token with its OAuth beta): the proxy
// forwards either as it came.
func TestLaunchClaude(t *testing.T) {
	t.Run("api-key", func(t *testing.T) { launchClaude(t, false) })
	t.Run("subscription", func(t *testing.T) { launchClaude(t, true) })
}

func launchClaude(t *testing.T, subscription bool) {
	r := newLaunchRig(t, "claude")
	var spillPath string
	r.up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "ok", nil, u)
		}
		call := func(id, args string) wiretest.Reply {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: "Read", Args: args}}, u)
		}
		if p := spillOf(req.Body); p != "" {
			spillPath = p
		}
		switch strings.Count(string(req.Body), `"type":"tool_result"`) {
		case 0:
			return call("call_lock", `{"file_path":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`,"limit":1200}`)
		case 1:
			if spillPath == "" {
				return wiretest.AnthropicStream(model, "no spill file named", nil, u)
			}
			return call("call_page", `{"file_path":`+mustJSONString(spillPath)+`,"offset":1001,"limit":10}`)
		}
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	}
	t.Setenv("ANTHROPIC_BASE_URL", r.up.URL)
	const token = "sk-ant-oat01-harness-test"
	if subscription {
		home := os.Getenv("HOME")
		creds := `{"claudeAiOauth":{"accessToken":"` + token + `","refreshToken":"sk-ant-ort01-harness-test","expiresAt":` +
			strconv.FormatInt(time.Now().Add(30*24*time.Hour).UnixMilli(), 10) + `,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}`
		if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(creds), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("ANTHROPIC_API_KEY", "")
	} else {
		t.Setenv("ANTHROPIC_API_KEY", "sk-test-claude-launch")
	}
	out := r.run(t, "claude", "-p", "Which version of zod does package-lock.json pin?", "--output-format", "json")
	if !strings.Contains(out, e2eAnswer) || strings.Contains(out, `"permission_denials":[{`) {
		t.Errorf("claude answered:\n%s", tail(out, 3000))
	}
	r.checkPaged(t, "Read", anthropicResult("call_page"))
	for _, q := range r.up.Requests() {
		if q.Method == http.MethodPost && strings.HasSuffix(q.Path, "/v1/messages") && (q.Header.Get("Authorization") == "Bearer "+token) != subscription {
			t.Fatalf("a model call with Authorization %.20q (subscription: %v)", q.Header.Get("Authorization"), subscription)
		}
	}
}

// TestLaunchGemini: harness gemini, with an API key (the Gemini API,
// GOOGLE_GEMINI_BASE_URL) and signed in with Google (Code Assist,
// CODE_ASSIST_ENDPOINT, its requests and answers the Gemini API's under
// "request" and "response"; here with a machine's default credentials,
// whose token a loopback metadata server gives, as a Google sign-in needs
// Google's servers): the launcher points both at the proxy, read_file's
// whole lock file is spilled to a folder of harness's own that Gemini CLI
// is given, and read_file pages the spill file.
func TestLaunchGemini(t *testing.T) {
	t.Run("api-key", func(t *testing.T) { launchGemini(t, false) })
	t.Run("google", func(t *testing.T) { launchGemini(t, true) })
}

func launchGemini(t *testing.T, google bool) {
	r := newLaunchRig(t, "gemini")
	var spillPath string
	r.up.Respond = func(req wiretest.Request) wiretest.Reply {
		if google {
			if rep, ok := codeAssistService(req); ok {
				return rep
			}
		}
		if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") && !strings.Contains(req.Path, "/v1internal:") {
			return notModelCall(req)
		}
		body, model := req.Body, geminiPathModel(req.Path)
		if google {
			var env struct {
				Model   string          `json:"model"`
				Request json.RawMessage `json:"request"`
			}
			_ = json.Unmarshal(req.Body, &env)
			body, model = env.Request, env.Model
		}
		u := wiretest.Usage{Input: len(body) / 4, Output: 20}
		reply := func(rep wiretest.Reply) wiretest.Reply {
			if google {
				return codeAssistReply(rep)
			}
			return rep
		}
		if strings.HasSuffix(req.Path, ":generateContent") {
			return reply(geminiRouterReply(u))
		}
		call := func(id, args string) wiretest.Reply {
			return reply(wiretest.GeminiStream(model, "", []wiretest.Call{{ID: id, Name: "read_file", Args: args}}, u))
		}
		if p := spillOf(body); p != "" {
			spillPath = p
		}
		switch strings.Count(string(body), `"functionResponse"`) {
		case 0:
			return call("call_lock", `{"file_path":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`,"start_line":1,"end_line":2000}`)
		case 1:
			if spillPath == "" {
				return reply(wiretest.GeminiStream(model, "no spill file named", nil, u))
			}
			return call("call_page", `{"file_path":`+mustJSONString(spillPath)+`,"start_line":1001,"end_line":1010}`)
		}
		return reply(wiretest.GeminiStream(model, e2eAnswer, nil, u))
	}
	if google {
		t.Setenv("HOME", newGeminiHomeAuth(t, "compute-default-credentials"))
		t.Setenv("CODE_ASSIST_ENDPOINT", r.up.URL)
		t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(r.up.URL, "http://"))
		t.Setenv("GOOGLE_CLOUD_PROJECT", "harness-test")
	} else {
		t.Setenv("HOME", newGeminiHome(t, ""))
		t.Setenv("GOOGLE_GEMINI_BASE_URL", r.up.URL)
		t.Setenv("GEMINI_API_KEY", "sk-test-gemini-launch")
	}
	t.Setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	out := r.run(t, "gemini", "-p", "Which version of zod does package-lock.json pin?", "-o", "json")
	if !strings.Contains(out, e2eAnswer) {
		t.Errorf("gemini answered:\n%s", tail(out, 3000))
	}
	find := geminiResponse("call_page")
	if google {
		find = underRequest(find)
	}
	r.checkPaged(t, "read_file", find)
	streamed := 0
	for _, q := range r.up.Requests() {
		if strings.HasPrefix(q.Path, "/v1internal:streamGenerateContent") {
			streamed++
		}
	}
	if google != (streamed > 0) {
		t.Errorf("%d model calls reached Code Assist (signed in with Google: %v)", streamed, google)
	}
}

// TestLaunchCodex: harness codex exec, with Codex's built-in OpenAI
// provider: the launcher sets its base URL for the run (-c
// openai_base_url), the lock file read with the shell (Codex's own cap
// raised in the user's config, since under it nothing reaches the
// ceiling) is spilled under the project, and the shell pages the spill
// file with sed. Signed in with ChatGPT, Codex compresses its calls with
// zstd and sends them, with its ChatGPT token, where openai_base_url in
// its config says: the launcher forwards there (the gateway the user
// chose), reading and cutting them all the same.
func TestLaunchCodex(t *testing.T) {
	t.Run("api-key", func(t *testing.T) { launchCodex(t, false) })
	t.Run("chatgpt", func(t *testing.T) { launchCodex(t, true) })
}

func launchCodex(t *testing.T, chatgpt bool) {
	r := newLaunchRig(t, "codex")
	var spillPath string
	r.up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/responses") {
			return notModelCall(req)
		}
		model, _ := bodyJSON(t, req.Body)["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		shell := func(id, cmd string) wiretest.Reply {
			return wiretest.ResponsesStream(model, "", []wiretest.Call{{ID: id, Name: "exec_command", Args: `{"cmd":` + mustJSONString(cmd) + `,"max_output_tokens":100000}`}}, u)
		}
		if p := spillOf(req.Body); p != "" {
			spillPath = p
		}
		switch strings.Count(string(req.Body), `"type":"function_call_output"`) {
		case 0:
			return shell("call_lock", "cat package-lock.json")
		case 1:
			if spillPath == "" {
				return wiretest.ResponsesStream(model, "no spill file named", nil, u)
			}
			return shell("call_page", "sed -n '1001,1010p' "+spillPath)
		}
		return wiretest.ResponsesStream(model, e2eAnswer, nil, u)
	}
	if chatgpt {
		codexHome, _ := chatGPTLogin(t, r.up.URL)
		t.Setenv("CODEX_HOME", codexHome)
	} else {
		codexHome := t.TempDir()
		config := "model = \"gpt-test\"\ntool_output_token_limit = 100000\n\n[features]\nplugins = false\nremote_plugin = false\napps = false\n\n[analytics]\nenabled = false\n"
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CODEX_HOME", codexHome)
		t.Setenv("OPENAI_BASE_URL", r.up.URL+"/v1")
		t.Setenv("OPENAI_API_KEY", "sk-test-codex-launch")
	}
	out := r.run(t, "codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Which version of zod does package-lock.json pin?")
	if !strings.Contains(out, e2eAnswer) {
		t.Errorf("codex answered:\n%s", tail(out, 3000))
	}
	r.checkPaged(t, "shell", responsesOutput("call_page"))
	for _, q := range r.up.Requests() {
		if q.Method == http.MethodPost && strings.HasSuffix(q.Path, "/responses") && (q.Header.Get("ChatGPT-Account-Id") != "") != chatgpt {
			t.Fatalf("a model call with ChatGPT-Account-Id %q (signed in with ChatGPT: %v)", q.Header.Get("ChatGPT-Account-Id"), chatgpt)
		}
	}
}

// TestLaunchOpencode: harness opencode run, with opencode's Anthropic
// provider whose baseURL the user set in OPENCODE_CONFIG_CONTENT: the
// launcher forwards to it and points the provider at the proxy for the
// run. opencode's read returns the lock file's first 50 KB, over the
// ceiling, so the proxy spills it under the project, and the same read
// pages the spill file with an offset.
func TestLaunchOpencode(t *testing.T) {
	r := newLaunchRig(t, "opencode")
	var spillPath string
	r.up.Respond = func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "Zod version", nil, u) // the title request
		}
		call := func(id, args string) wiretest.Reply {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: "read", Args: args}}, u)
		}
		if p := spillOf(req.Body); p != "" {
			spillPath = p
		}
		switch strings.Count(string(req.Body), `"type":"tool_result"`) {
		case 0:
			return call("call_lock", `{"filePath":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`}`)
		case 1:
			if spillPath == "" {
				return wiretest.AnthropicStream(model, "no spill file named", nil, u)
			}
			// From line 1000 (0- or 1-based, as opencode counts) 20 lines:
			// lines 1001-1010 either way.
			return call("call_page", `{"filePath":`+mustJSONString(spillPath)+`,"offset":1000,"limit":20}`)
		}
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	}
	for _, kv := range opencodeEnv(os.Getenv("HOME"), "anthropic", r.up.URL, "sk-test-opencode-launch", "") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	out := r.run(t, "opencode", "run", "Which version of zod does package-lock.json pin?")
	if !strings.Contains(out, e2eAnswer) {
		t.Errorf("opencode answered:\n%s", tail(out, 3000))
	}
	r.checkPaged(t, "read", anthropicResult("call_page"))
}

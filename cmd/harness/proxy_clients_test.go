package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/clientctx"
	"github.com/agentharness/harness/internal/wiretest"
)

// scriptStep says which step of the script a request is at: how many tool
// results its history carries.
func scriptStep(n int, call func(id, cmd string) wiretest.Reply, answer func() wiretest.Reply) wiretest.Reply {
	switch n {
	case 0:
		return call("call_lock", "cat package-lock.json")
	case 1:
		return call("call_pkg", "cat package.json")
	}
	return answer()
}

// codexStep answers a Codex model call by the script's step: cat the lock
// file, then package.json, with exec_command, then the answer.
func codexStep(req wiretest.Request, model string, u wiretest.Usage) wiretest.Reply {
	n := strings.Count(string(req.Body), `"type":"function_call_output"`)
	return scriptStep(n, func(id, cmd string) wiretest.Reply {
		return wiretest.ResponsesStream(model, "", []wiretest.Call{{ID: id, Name: "exec_command", Args: `{"cmd":"` + cmd + `","max_output_tokens":100000}`}}, u)
	}, func() wiretest.Reply { return wiretest.ResponsesStream(model, e2eAnswer, nil, u) })
}

// notModelCall answers what is not a model call: HEAD / (Claude Code's
// reachability check) with 200, anything else with 404.
func notModelCall(req wiretest.Request) wiretest.Reply {
	if req.Method == http.MethodHead && req.Path == "/" {
		return wiretest.Reply{}
	}
	return wiretest.Error(http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
}

// jsonStrings returns, for each request body, the content values of the
// tool results answering id, as the proxy encodes strings.
func resultContents(t *testing.T, reqs []wiretest.Request, find func(map[string]any) (any, bool)) []string {
	var out []string
	for _, r := range reqs {
		if len(r.Body) == 0 || !strings.HasPrefix(r.Path, "/v1") && !strings.HasPrefix(r.Path, "/backend-api/") {
			continue // not a model call (a listing, a WebSocket upgrade Codex tries first)
		}
		v, ok := find(bodyJSON(t, r.Body))
		if !ok {
			continue
		}
		s, _ := v.(string)
		enc, _ := json.Marshal(s)
		if strings.Contains(s, "[harness:") && !strings.Contains(string(r.Body), string(enc)) {
			t.Errorf("the result's content is not sent as the proxy encodes it")
		}
		out = append(out, string(enc))
	}
	return out
}

// cacheAsks counts the model calls among reqs (paths ending in suffix)
// and those whose body holds marker, a member asking for a longer prompt
// cache than the format's default; the proxy's idle clear waits for the
// longer cache then. It logs the counts, so docs/design.md can say which
// cache lifetime each real client gets.
func cacheAsks(t *testing.T, reqs []wiretest.Request, suffix, marker string) (calls, asking int) {
	t.Helper()
	for _, r := range reqs {
		if strings.HasSuffix(r.Path, suffix) {
			calls++
			if strings.Contains(string(r.Body), marker) {
				asking++
			}
		}
	}
	t.Logf("%d of %d model calls carry %s", asking, calls, marker)
	return calls, asking
}

// TestProxyClaudeCode runs Claude Code through the proxy. Claude Code
// persists a Bash output over 30,000 characters to a file of its own and
// sends a 2 KB preview, so the lock file read with the shell reaches the
// proxy under the ceiling and passes unchanged; its Read tool sends up to
// 2,000 lines whole, so the script's second step reads the lock file with
// Read and that result is what the proxy cuts.
func TestProxyClaudeCode(t *testing.T) {
	bin := clientBin(t, "claude")
	// The handler reads r, assigned once startE2E returns; the client that
	// calls it is another process, so ready orders the two for the race
	// detector.
	var r *e2eRig
	ready := make(chan struct{})
	r = startE2E(t, func(req wiretest.Request) wiretest.Reply {
		<-ready
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "ok", nil, u) // a side request (title, topic)
		}
		call := func(id, name, args string) wiretest.Reply {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: name, Args: args}}, u)
		}
		switch strings.Count(string(req.Body), `"type":"tool_result"`) {
		case 0:
			return call("call_shell", "Bash", `{"command":"cat package-lock.json","description":"Read the lock file"}`)
		case 1:
			return call("call_lock", "Read", `{"file_path":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`,"limit":1200}`)
		case 2:
			return call("call_pkg", "Bash", `{"command":"cat package.json","description":"Read the manifest"}`)
		}
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	})
	close(ready)
	home := t.TempDir()
	out := runClient(t, r.work, []string{
		"HOME=" + home, "ANTHROPIC_BASE_URL=" + r.addr, "ANTHROPIC_API_KEY=sk-test-claude-e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
	}, bin, "-p", "Which version of zod does package-lock.json pin? Read it with cat.", "--output-format", "json", "--allowedTools", "Bash(cat:*)", "Read")
	var res struct {
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil || res.IsError || !strings.Contains(res.Result, e2eAnswer) {
		t.Fatalf("claude answered %q (error %v, is_error %v); output:\n%s", res.Result, err, res.IsError, tail(out, 2000))
	}
	shellRaw := resultContents(t, r.up.Requests(), anthropicResult("call_shell"))
	for _, s := range shellRaw {
		if strings.Contains(s, "[harness:") || len(s) > guard.DefaultMaxBytes {
			t.Errorf("Claude Code's own preview of the shell output was changed or is over the ceiling (%d bytes)", len(s))
		}
	}
	shell := sentText(t, shellRaw)
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), anthropicResult("call_lock")))
	// Its cache_control blocks ask for no "ttl": the 5-minute cache, after
	// which the proxy's idle clear acts.
	if calls, asking := cacheAsks(t, r.up.Requests(), "/v1/messages", `"ttl"`); calls == 0 || asking != 0 {
		t.Errorf("Claude Code asked for a cache ttl in %d of %d model calls; docs/design.md says none", asking, calls)
	}
	noCredentialStored(t, r.db, "sk-test-claude-e2e")
	// Its own history: ~/.claude/projects/<the workspace, escaped>/<session>.jsonl.
	projects, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*"))
	if len(projects) != 1 {
		t.Fatalf("Claude Code wrote %d project folders, want 1: %q", len(projects), projects)
	}
	checkOwnHistory(t, ownHistory{dir: projects[0], format: "claude-code",
		calls: []string{"call_shell Bash", "call_lock Read", "call_pkg Bash"},
		sent: map[string]string{"call_shell": shell, "call_lock": lock,
			"call_pkg": sentText(t, resultContents(t, r.up.Requests(), anthropicResult("call_pkg")))},
		warn:  []string{"not recorded by claude-code: the system prompt and the tool schemas", "1 results were cut by Claude Code itself"},
		proxy: r, context: clientctx.ClaudeCode})
}

// anthropicResult finds, in a Messages request, the content of the
// tool_result answering id.
func anthropicResult(id string) func(map[string]any) (any, bool) {
	return func(m map[string]any) (any, bool) {
		msgs, _ := m["messages"].([]any)
		for _, msg := range msgs {
			blocks, _ := msg.(map[string]any)["content"].([]any)
			for _, b := range blocks {
				bl, _ := b.(map[string]any)
				if bl["type"] == "tool_result" && bl["tool_use_id"] == id {
					return anthropicText(bl["content"]), true
				}
			}
		}
		return nil, false
	}
}

// anthropicText reads a tool_result's content: a string, or the text of
// its blocks.
func anthropicText(v any) any {
	if s, ok := v.(string); ok {
		return s
	}
	blocks, _ := v.([]any)
	var texts []string
	for _, b := range blocks {
		if bl, ok := b.(map[string]any); ok && bl["type"] == "text" {
			s, _ := bl["text"].(string)
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n")
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestProxyCodex(t *testing.T) {
	bin := clientBin(t, "codex")
	r := startE2E(t, func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/responses") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		return codexStep(req, model, u)
	})
	// Codex caps a tool output at 10,000 bytes before the model sees it;
	// tool_output_token_limit raises the cap so the lock file reaches the
	// proxy over its ceiling.
	codexHome := newCodexHome(t, r.addr, "tool_output_token_limit = 100000\n", "")
	out := runClient(t, r.work, []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome, "FAKE_API_KEY=sk-test-codex-e2e"},
		bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json", "Which version of zod does package-lock.json pin? Read it with cat.")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("codex did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), responsesOutput("call_lock")))
	// No prompt_cache_retention: the automatic cache, gone after an hour.
	if calls, asking := cacheAsks(t, r.up.Requests(), "/responses", `"prompt_cache_retention"`); calls == 0 || asking != 0 {
		t.Errorf("Codex set prompt_cache_retention in %d of %d model calls; docs/design.md says none", asking, calls)
	}
	noCredentialStored(t, r.db, "sk-test-codex-e2e")
	// Its own history: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl,
	// with the system prompt as base_instructions; Codex 0.171.0 sends it
	// as the first input item, a developer message.
	var system, developer string
	for _, q := range r.up.Requests() {
		if strings.HasSuffix(q.Path, "/responses") {
			m := bodyJSON(t, q.Body)
			system, developer = codexSystem(m), codexDeveloper(m)
			break
		}
	}
	checkOwnHistory(t, ownHistory{dir: filepath.Join(codexHome, "sessions"), format: "codex",
		calls:  []string{"call_lock exec_command", "call_pkg exec_command"},
		sent:   map[string]string{"call_lock": lock, "call_pkg": sentText(t, resultContents(t, r.up.Requests(), responsesOutput("call_pkg")))},
		system: system, warn: []string{"not recorded by codex: the tool schemas"},
		proxy: r, context: func(text string) bool { return clientctx.Codex("user", text) }, sameContext: true, developer: developer})
}

// responsesOutput finds, in a Responses request, the output of the
// function call id.
func responsesOutput(id string) func(map[string]any) (any, bool) {
	return func(m map[string]any) (any, bool) {
		items, _ := m["input"].([]any)
		for _, it := range items {
			o, _ := it.(map[string]any)
			if o["type"] == "function_call_output" && o["call_id"] == id {
				return flattenContent(o["output"]), true
			}
		}
		return nil, false
	}
}

// codexSystem is the system prompt of a Responses request: its
// instructions, or the text of a first input item that is a developer
// message.
func codexSystem(m map[string]any) string {
	if s, _ := m["instructions"].(string); s != "" {
		return s
	}
	items, _ := m["input"].([]any)
	if len(items) == 0 {
		return ""
	}
	first, _ := items[0].(map[string]any)
	if first["role"] != "developer" {
		return ""
	}
	var texts []string
	content, _ := first["content"].([]any)
	for _, c := range content {
		if s, _ := c.(map[string]any)["text"].(string); s != "" {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n")
}

// codexDeveloper joins the texts of a Responses request's developer
// messages (Codex sends its permissions and skills there).
func codexDeveloper(m map[string]any) string {
	var texts []string
	items, _ := m["input"].([]any)
	for _, it := range items {
		msg, _ := it.(map[string]any)
		if msg["role"] != "developer" {
			continue
		}
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if s, _ := c.(map[string]any)["text"].(string); s != "" {
				texts = append(texts, s)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// flattenContent returns a content value that is a string as is.
func flattenContent(v any) any {
	if s, ok := v.(string); ok {
		return s
	}
	return nil
}

// noCredentialStored checks that no byte of the store holds the key.
func noCredentialStored(t *testing.T, db, key string) {
	t.Helper()
	for _, p := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the client's API key", filepath.Base(p))
		}
	}
}

// TestProxyGeminiCLI runs Gemini CLI through the proxy. It first sends a
// router request (a flash-lite generateContent asking for a JSON choice),
// then streams the main calls.
func TestProxyGeminiCLI(t *testing.T) {
	bin := clientBin(t, "gemini")
	r := startE2E(t, func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.Contains(req.Path, "/models/") {
			return notModelCall(req)
		}
		model := geminiPathModel(req.Path)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		if strings.HasSuffix(req.Path, ":generateContent") {
			return geminiRouterReply(u)
		}
		n := strings.Count(string(req.Body), `"functionResponse"`)
		return scriptStep(n, func(id, cmd string) wiretest.Reply {
			return wiretest.GeminiStream(model, "", []wiretest.Call{{ID: id, Name: "run_shell_command", Args: `{"command":"` + cmd + `"}`}}, u)
		}, func() wiretest.Reply { return wiretest.GeminiStream(model, e2eAnswer, nil, u) })
	})
	home := newGeminiHome(t, "")
	out := runClient(t, r.work, []string{"HOME=" + home, "GEMINI_API_KEY=sk-test-gemini-e2e", "GOOGLE_GEMINI_BASE_URL=" + r.addr,
		"GEMINI_CLI_TRUST_WORKSPACE=true"},
		bin, "-p", "Which version of zod does package-lock.json pin? Read it with cat.", "--yolo", "--skip-trust", "-o", "json")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("gemini did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), geminiResponse("call_lock")))
	noCredentialStored(t, r.db, "sk-test-gemini-e2e")
	// Its own history: ~/.gemini/tmp/<project>/chats/session-*.jsonl (the
	// full outputs it cut are beside it, in tool-outputs/, and skipped).
	checkOwnHistory(t, ownHistory{dir: filepath.Join(home, ".gemini", "tmp"), format: "gemini-cli",
		calls: []string{"call_lock run_shell_command", "call_pkg run_shell_command"},
		sent:  map[string]string{"call_lock": lock, "call_pkg": sentText(t, resultContents(t, r.up.Requests(), geminiResponse("call_pkg")))},
		warn:  []string{"not recorded by gemini-cli: the system prompt and the tool schemas", "1 responses were cut by Gemini CLI itself"},
		proxy: r, context: clientctx.Gemini})
}

// newCodexHome writes a CODEX_HOME whose config.toml points Codex at the
// proxy at addr (a provider "fake" over the Responses API, its key in
// FAKE_API_KEY), with plugins, apps and analytics off; top adds top-level
// keys, tables more tables (an MCP server).
func newCodexHome(t *testing.T, addr, top, tables string) string {
	t.Helper()
	home := t.TempDir()
	config := "model = \"gpt-test\"\nmodel_provider = \"fake\"\n" + top +
		"\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"" + addr + "/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n" +
		"\n[features]\nplugins = false\nremote_plugin = false\napps = false\n\n[analytics]\nenabled = false\n" + tables
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// newGeminiHome writes a HOME whose ~/.gemini/settings.json selects the
// API key and turns usage statistics and telemetry off; more adds members
// (`,"mcpServers":{…}`).
func newGeminiHome(t *testing.T, more string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"auth":{"selectedType":"gemini-api-key"}}` + more + `}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// geminiPathModel is the model a Gemini API path names
// (/v1beta/models/MODEL:streamGenerateContent).
func geminiPathModel(path string) string {
	_, model, _ := strings.Cut(path, "/models/")
	model, _, _ = strings.Cut(model, ":")
	return model
}

// geminiRouterReply answers Gemini CLI's router (and any other unary
// generateContent call) with the JSON choice it asks for.
func geminiRouterReply(u wiretest.Usage) wiretest.Reply {
	text := `{"reasoning":"simple task","model_choice":"flash"}`
	return wiretest.JSON(`{"candidates":[{"content":{"role":"model","parts":[{"text":` + mustJSONString(text) + `}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":` + fmt.Sprint(u.Input) + `,"candidatesTokenCount":5,"totalTokenCount":` + fmt.Sprint(u.Input+5) + `}}`)
}

// newGeminiHomeAuth is newGeminiHome signed in with auth (Gemini CLI's
// security.auth.selectedType) instead of an API key.
func newGeminiHomeAuth(t *testing.T, auth string) string {
	t.Helper()
	home := newGeminiHome(t, "")
	settings := `{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"auth":{"selectedType":` + mustJSONString(auth) + `}}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// codeAssistService answers what Gemini CLI signed in with Google asks
// besides model calls: the access token of a machine's default
// credentials from its metadata server, and Code Assist's set-up
// (loadCodeAssist: a free tier and its project; quotas, experiments).
func codeAssistService(req wiretest.Request) (wiretest.Reply, bool) {
	switch {
	case strings.HasSuffix(req.Path, "/service-accounts/default/token"):
		return wiretest.Reply{Header: http.Header{"Metadata-Flavor": {"Google"}}, Body: `{"access_token":"ya29.harness-test","expires_in":3600,"token_type":"Bearer"}`}, true
	case strings.HasPrefix(req.Path, "/computeMetadata/"):
		return wiretest.Reply{Header: http.Header{"Metadata-Flavor": {"Google"}}, Body: "harness-test"}, true
	case strings.HasSuffix(req.Path, ":loadCodeAssist"):
		return wiretest.JSON(`{"currentTier":{"id":"free-tier","name":"free"},"cloudaicompanionProject":"harness-test","allowedTiers":[{"id":"free-tier","isDefault":true}]}`), true
	case strings.HasSuffix(req.Path, ":onboardUser"):
		return wiretest.JSON(`{"done":true,"response":{"cloudaicompanionProject":{"id":"harness-test"}}}`), true
	case strings.Contains(req.Path, "/v1internal:") && !strings.Contains(req.Path, "enerateContent"):
		return wiretest.JSON(`{}`), true
	}
	return wiretest.Reply{}, false
}

// codeAssistReply is a Gemini API answer as Code Assist sends it: each
// event's (or the body's) response under "response".
func codeAssistReply(rep wiretest.Reply) wiretest.Reply {
	if rep.Body != "" {
		rep.Body = `{"response":` + rep.Body + `,"traceId":"t"}`
	}
	for i, e := range rep.Events {
		rep.Events[i].Data = `{"response":` + e.Data + `,"traceId":"t"}`
	}
	return rep
}

// underRequest finds with find in a Code Assist request's "request".
func underRequest(find func(map[string]any) (any, bool)) func(map[string]any) (any, bool) {
	return func(m map[string]any) (any, bool) {
		inner, _ := m["request"].(map[string]any)
		return find(inner)
	}
}

// geminiResponse finds, in a generateContent request, the output of the
// function response answering id (or answering a call without one).
func geminiResponse(id string) func(map[string]any) (any, bool) {
	return func(m map[string]any) (any, bool) {
		contents, _ := m["contents"].([]any)
		for _, c := range contents {
			parts, _ := c.(map[string]any)["parts"].([]any)
			for _, p := range parts {
				fr, _ := p.(map[string]any)["functionResponse"].(map[string]any)
				if fr == nil || (fr["id"] != id && fr["id"] != nil) {
					continue
				}
				resp, _ := fr["response"].(map[string]any)
				return resp["output"], true
			}
		}
		return nil, false
	}
}

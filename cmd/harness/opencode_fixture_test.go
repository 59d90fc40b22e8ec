package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestMakeOpencodeFixture writes replay/testdata/opencode/opencode.db, the
// history the real opencode (pinned in .ci/clients) keeps of a scripted
// session: a shell output it cuts itself, a read that fails, a small read,
// a compaction (the scripted usage overflows a 50,000-token context), the
// answer, and a second turn run with --continue. It runs only when
// HARNESS_OPENCODE_FIXTURE names the folder to write to; the replay tests
// read the shipped copy.
func TestMakeOpencodeFixture(t *testing.T) {
	dir := os.Getenv("HARNESS_OPENCODE_FIXTURE")
	if dir == "" {
		t.Skip("set HARNESS_OPENCODE_FIXTURE=replay/testdata/opencode to write the fixture")
	}
	bin := clientBin(t, "opencode")
	var r *e2eRig
	ready := make(chan struct{})
	r = startE2E(t, func(req wiretest.Request) wiretest.Reply {
		<-ready
		return opencodeFixtureStep(t, r, req)
	})
	close(ready)
	home := t.TempDir()
	limits := `"models":{"claude-sonnet-4-5":{"limit":{"context":50000,"output":2000}}}`
	env := opencodeEnv(home, "anthropic", r.addr, "sk-test-opencode-fixture", limits)
	runClient(t, r.work, env, bin, "run", "Which version of zod does package-lock.json pin?")
	runClient(t, r.work, env, bin, "run", "--continue", "Second question: list the files.")
	src := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	db, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out, _ := filepath.Abs(filepath.Join("..", "..", dir, "opencode.db"))
	_ = os.Remove(out)
	if _, err := db.ExecContext(context.Background(), `VACUUM INTO ?`, out); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

var opencodeLastResult = regexp.MustCompile(`"tool_use_id":"(call_[a-z]+)"`)

// opencodeFixtureStep answers one request of the fixture's script, by the
// last tool result the request carries.
func opencodeFixtureStep(t *testing.T, r *e2eRig, req wiretest.Request) wiretest.Reply {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
		return notModelCall(req)
	}
	body := string(req.Body)
	m := bodyJSON(t, req.Body)
	model, _ := m["model"].(string)
	u := wiretest.Usage{Input: len(body) / 4, Cached: len(body) / 8, Output: 20}
	if tools, _ := m["tools"].([]any); len(tools) == 0 {
		if strings.Contains(body, "title generator") {
			return wiretest.AnthropicStream(model, "Zod version", nil, u)
		}
		return wiretest.AnthropicStream(model, "SUMMARY: seq and package.json were read; missing.txt does not exist.", nil, u)
	}
	last := ""
	if ids := opencodeLastResult.FindAllStringSubmatch(body, -1); len(ids) > 0 {
		last = ids[len(ids)-1][1]
	}
	call := func(id, name, args string) wiretest.Reply {
		return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: name, Args: args}}, u)
	}
	switch {
	case strings.Contains(body, "Second question"):
		if last == "call_ls" {
			return wiretest.AnthropicStream(model, "Done.", nil, u)
		}
		return call("call_ls", "bash", `{"command":"ls","description":"List the files"}`)
	case strings.Contains(body, "SUMMARY:"):
		// After the compaction: the summary and nothing after it.
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	case last == "":
		return call("call_seq", "bash", `{"command":"seq 1 30000","description":"Count"}`)
	case last == "call_seq":
		return call("call_missing", "read", `{"filePath":`+mustJSONString(filepath.Join(r.work, "missing.txt"))+`}`)
	case last == "call_missing":
		u.Input = 60000 // over the context: opencode compacts after this step
		return call("call_pkg", "read", `{"filePath":`+mustJSONString(filepath.Join(r.work, "package.json"))+`}`)
	}
	return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
}

// opencodeEnv is the environment opencode runs in: its own HOME, the
// provider ("anthropic" or "openai") at the proxy with its models and
// their settings (models, "" for none), and nothing fetched or updated.
func opencodeEnv(home, provider, addr, key, models string) []string {
	model, small := "anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5"
	if provider == "openai" {
		model, small = "openai/gpt-5", "openai/gpt-5-mini"
	}
	cfg := `{"autoupdate":false,"share":"disabled","model":"` + model + `","small_model":"` + small + `",` +
		`"provider":{"` + provider + `":{"options":{"baseURL":"` + addr + `/v1","apiKey":"` + key + `"}`
	if models != "" {
		cfg += "," + models
	}
	cfg += `}}}`
	return []string{"HOME=" + home, "OPENCODE_CONFIG_CONTENT=" + cfg, "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "npm_config_offline=true"}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/mcptest"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/replay"
)

// opencodeWire is how opencode talks to one provider: the model call's
// path, the streamed answer, how a request marks a tool result, where its
// content is, and the member that would ask for a longer prompt cache.
type opencodeWire struct {
	name, provider, path, resultMark, cacheMarker string
	// mcp reads the lock file with the filesystem MCP server's tool
	// instead of opencode's read.
	mcp    bool
	reply  func(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply
	result func(id string) func(map[string]any) (any, bool)
}

// TestProxyOpencode runs opencode through the proxy with both providers
// its users point at it: Anthropic's (the AI SDK's Messages client) and
// OpenAI's (its Responses client, store false, the whole history every
// request). opencode's shell tool keeps only the tail of an output over
// 50 KB or 2,000 lines, and how much of it depends on how the pipe's reads
// fell (from a few KB to 50 KB), so the lock file is read with its read
// tool instead: the first 50 KB, every time, which is over the proxy's
// ceiling and is what the proxy cuts. A third run reads it with the real
// filesystem MCP server's tool, whose result opencode cuts to its head
// and saves whole, which its history import reads back.
func TestProxyOpencode(t *testing.T) {
	bin := clientBin(t, "opencode")
	for _, w := range []opencodeWire{
		{name: "anthropic", provider: "anthropic", path: "/v1/messages", resultMark: `"type":"tool_result"`, cacheMarker: `"ttl"`, reply: wiretest.AnthropicStream, result: anthropicResult},
		{name: "openai", provider: "openai", path: "/v1/responses", resultMark: `"type":"function_call_output"`, cacheMarker: `"prompt_cache_retention"`, reply: wiretest.ResponsesStream, result: responsesOutput},
		{name: "mcp", provider: "anthropic", mcp: true, path: "/v1/messages", resultMark: `"type":"tool_result"`, cacheMarker: `"ttl"`, reply: wiretest.AnthropicStream, result: anthropicResult},
	} {
		t.Run(w.name, func(t *testing.T) { runOpencode(t, bin, w) })
	}
}

func runOpencode(t *testing.T, bin string, w opencodeWire) {
	var r *e2eRig
	ready := make(chan struct{})
	r = startE2E(t, func(req wiretest.Request) wiretest.Reply {
		<-ready
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, w.path) {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Cached: len(req.Body) / 8, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return w.reply(model, "Zod version", nil, u) // the title request
		}
		call := func(id, name, args string) wiretest.Reply {
			return w.reply(model, "", []wiretest.Call{{ID: id, Name: name, Args: args}}, u)
		}
		switch strings.Count(string(req.Body), w.resultMark) {
		case 0:
			lock := mustJSONString(filepath.Join(r.work, "package-lock.json"))
			if w.mcp {
				return call("call_lock", "fs_read_text_file", `{"path":`+lock+`}`)
			}
			return call("call_lock", "read", `{"filePath":`+lock+`}`)
		case 1:
			return call("call_pkg", "bash", `{"command":"cat package.json","description":"Read the manifest"}`)
		}
		return w.reply(model, e2eAnswer, nil, u)
	})
	close(ready)
	home := t.TempDir()
	key := "sk-test-opencode-" + w.name
	env := opencodeEnv(home, w.provider, r.addr, key, "")
	if w.mcp {
		env = withOpencodeMCP(t, env, r.work)
	}
	out := runClient(t, r.work, env, bin, "run", "Which version of zod does package-lock.json pin?")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("opencode did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), w.result("call_lock")))
	switch note := "(Output capped at 50 KB."; {
	case w.mcp:
		note = fmt.Sprintf("\n\n...%d bytes truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: ", len(r.lock)-51_197)
		if !strings.HasPrefix(lock, r.lock[:51_197]+note) {
			t.Errorf("opencode sent the MCP result as %.200q…: not its first 51,197 bytes (1,297 lines) and the note the opencode preset writes", lock[min(len(lock), 51_100):])
		}
	case !strings.Contains(lock, note):
		t.Errorf("opencode's read sent %d characters without its 50 KB cap's note: the script no longer tests what it says", len(lock))
	}
	// No request asks for a longer cache than the format's default (the
	// 5-minute cache, OpenAI's automatic one), after which the proxy's
	// idle clear acts.
	if calls, asking := cacheAsks(t, r.up.Requests(), w.path, w.cacheMarker); calls == 0 || asking != 0 {
		t.Errorf("opencode asked for a longer cache in %d of %d model calls; docs/design.md says none", asking, calls)
	}
	noCredentialStored(t, r.db, key)
	lockTool := "read"
	if w.mcp {
		lockTool = "fs_read_text_file"
	}
	// Its own history: ~/.local/share/opencode/opencode.db, beside its
	// logs and snapshots, which the import passes over.
	checkOwnHistory(t, ownHistory{dir: filepath.Join(home, ".local", "share", "opencode"), format: "opencode",
		calls: []string{"call_lock " + lockTool, "call_pkg bash"},
		sent:  map[string]string{"call_lock": lock, "call_pkg": sentText(t, resultContents(t, r.up.Requests(), w.result("call_pkg")))},
		warn:  []string{"not recorded by opencode: the system prompt and the tool schemas"}})
	if w.mcp {
		checkReadBack(t, filepath.Join(home, ".local", "share", "opencode"), r.lock)
	}
}

// withOpencodeMCP adds the real filesystem MCP server, serving dir, to
// opencode's configuration in env.
func withOpencodeMCP(t *testing.T, env []string, dir string) []string {
	mcp, err := json.Marshal(map[string]any{"fs": map[string]any{"type": "local", "command": []string{"node", mcptest.Server(t, "server-filesystem"), dir}, "enabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(env)
	for i, e := range out {
		if cfg, ok := strings.CutPrefix(e, "OPENCODE_CONFIG_CONTENT="); ok {
			out[i] = "OPENCODE_CONFIG_CONTENT=" + strings.TrimSuffix(cfg, "}") + `,"mcp":` + string(mcp) + "}"
		}
	}
	return out
}

// checkReadBack checks that the import of opencode's history found the
// whole output opencode saved when it cut the MCP result.
func checkReadBack(t *testing.T, dir, whole string) {
	t.Helper()
	recs, _, err := replay.Load(dir)
	if err != nil || len(recs) != 1 || len(recs[0].Turns) == 0 || len(recs[0].Turns[0].Calls) == 0 || len(recs[0].Turns[0].Calls[0].Results) == 0 {
		t.Fatalf("import: %d recordings, %v", len(recs), err)
	}
	if r := recs[0].Turns[0].Calls[0].Results[0]; r.FullText() != whole {
		t.Errorf("the MCP result's full text is %d characters, the lock file %d: not read back from opencode's saved file", len(r.FullText()), len(whole))
	}
}

package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// opencodeWire is how opencode talks to one provider: the model call's
// path, the streamed answer, how a request marks a tool result, where its
// content is, and the member that would ask for a longer prompt cache.
type opencodeWire struct {
	provider, path, resultMark, cacheMarker string
	reply                                   func(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply
	result                                  func(id string) func(map[string]any) (any, bool)
}

// TestProxyOpencode runs opencode through the proxy with both providers
// its users point at it: Anthropic's (the AI SDK's Messages client) and
// OpenAI's (its Responses client, store false, the whole history every
// request). opencode's shell tool keeps only the tail of an output over
// 50 KB or 2,000 lines, and how much of it depends on how the pipe's reads
// fell (from a few KB to 50 KB), so the lock file is read with its read
// tool instead: the first 50 KB, every time, which is over the proxy's
// ceiling and is what the proxy cuts.
func TestProxyOpencode(t *testing.T) {
	bin := clientBin(t, "opencode")
	for _, w := range []opencodeWire{
		{provider: "anthropic", path: "/v1/messages", resultMark: `"type":"tool_result"`, cacheMarker: `"ttl"`, reply: wiretest.AnthropicStream, result: anthropicResult},
		{provider: "openai", path: "/v1/responses", resultMark: `"type":"function_call_output"`, cacheMarker: `"prompt_cache_retention"`, reply: wiretest.ResponsesStream, result: responsesOutput},
	} {
		t.Run(w.provider, func(t *testing.T) { runOpencode(t, bin, w) })
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
			return call("call_lock", "read", `{"filePath":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`}`)
		case 1:
			return call("call_pkg", "bash", `{"command":"cat package.json","description":"Read the manifest"}`)
		}
		return w.reply(model, e2eAnswer, nil, u)
	})
	close(ready)
	home := t.TempDir()
	key := "sk-test-opencode-" + w.provider
	out := runClient(t, r.work, opencodeEnv(home, w.provider, r.addr, key, ""),
		bin, "run", "Which version of zod does package-lock.json pin?")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("opencode did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), w.result("call_lock")))
	if !strings.Contains(lock, "(Output capped at 50 KB.") {
		t.Errorf("opencode's read sent %d characters without its 50 KB cap's note: the script no longer tests what it says", len(lock))
	}
	// No request asks for a longer cache than the format's default (the
	// 5-minute cache, OpenAI's automatic one), after which the proxy's
	// idle clear acts.
	if calls, asking := cacheAsks(t, r.up.Requests(), w.path, w.cacheMarker); calls == 0 || asking != 0 {
		t.Errorf("opencode asked for a longer cache in %d of %d model calls; docs/design.md says none", asking, calls)
	}
	noCredentialStored(t, r.db, key)
	// Its own history: ~/.local/share/opencode/opencode.db, beside its
	// logs and snapshots, which the import passes over.
	checkOwnHistory(t, ownHistory{dir: filepath.Join(home, ".local", "share", "opencode"), format: "opencode",
		calls: []string{"call_lock read", "call_pkg bash"},
		sent:  map[string]string{"call_lock": lock, "call_pkg": sentText(t, resultContents(t, r.up.Requests(), w.result("call_pkg")))},
		warn:  []string{"not recorded by opencode: the system prompt and the tool schemas"}})
}

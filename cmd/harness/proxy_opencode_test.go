package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

// TestProxyOpencode runs opencode (its Anthropic provider, the AI SDK's
// Messages client) through the proxy. opencode's shell tool keeps only
// the tail of an output over 50 KB or 2,000 lines, and how much of it
// depends on how the pipe's reads fell (from a few KB to 50 KB), so the
// lock file is read with its read tool instead: the first 50 KB, every
// time, which is over the proxy's ceiling and is what the proxy cuts.
func TestProxyOpencode(t *testing.T) {
	bin := clientBin(t, "opencode")
	var r *e2eRig
	ready := make(chan struct{})
	r = startE2E(t, func(req wiretest.Request) wiretest.Reply {
		<-ready
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, "/v1/messages") {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Cached: len(req.Body) / 8, Output: 20}
		if tools, _ := m["tools"].([]any); len(tools) == 0 {
			return wiretest.AnthropicStream(model, "Zod version", nil, u) // the title request
		}
		call := func(id, name, args string) wiretest.Reply {
			return wiretest.AnthropicStream(model, "", []wiretest.Call{{ID: id, Name: name, Args: args}}, u)
		}
		switch strings.Count(string(req.Body), `"type":"tool_result"`) {
		case 0:
			return call("call_lock", "read", `{"filePath":`+mustJSONString(filepath.Join(r.work, "package-lock.json"))+`}`)
		case 1:
			return call("call_pkg", "bash", `{"command":"cat package.json","description":"Read the manifest"}`)
		}
		return wiretest.AnthropicStream(model, e2eAnswer, nil, u)
	})
	close(ready)
	home := t.TempDir()
	out := runClient(t, r.work, opencodeEnv(home, r.addr, "sk-test-opencode-e2e", ""),
		bin, "run", "Which version of zod does package-lock.json pin?")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("opencode did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	lock := r.checkLockResult(t, resultContents(t, r.up.Requests(), anthropicResult("call_lock")))
	if !strings.Contains(lock, "(Output capped at 50 KB.") {
		t.Errorf("opencode's read sent %d characters without its 50 KB cap's note: the script no longer tests what it says", len(lock))
	}
	// Its cache_control blocks ask for no "ttl": the 5-minute cache.
	if calls, asking := cacheAsks(t, r.up.Requests(), "/v1/messages", `"ttl"`); calls == 0 || asking != 0 {
		t.Errorf("opencode asked for a cache ttl in %d of %d model calls; docs/design.md says none", asking, calls)
	}
	noCredentialStored(t, r.db, "sk-test-opencode-e2e")
	// Its own history: ~/.local/share/opencode/opencode.db, beside its
	// logs and snapshots, which the import passes over.
	checkOwnHistory(t, ownHistory{dir: filepath.Join(home, ".local", "share", "opencode"), format: "opencode",
		calls: []string{"call_lock read", "call_pkg bash"},
		sent:  map[string]string{"call_lock": lock, "call_pkg": sentText(t, resultContents(t, r.up.Requests(), anthropicResult("call_pkg")))},
		warn:  []string{"not recorded by opencode: the system prompt and the tool schemas"}})
}

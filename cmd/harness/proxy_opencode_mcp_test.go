package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/toolselect"
)

// opencodeMCPWire is how opencode talks to one provider in the MCP
// tests: the model call's path, how a request marks a tool result, the
// streamed answer, and how to read a result back.
type opencodeMCPWire struct {
	path, resultMark string
	reply            func(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply
	result           func(id string) func(map[string]any) (any, bool)
}

var opencodeMCPWires = map[string]opencodeMCPWire{
	"anthropic": {path: "/v1/messages", resultMark: `"type":"tool_result"`, reply: wiretest.AnthropicStream, result: anthropicResult},
	"openai":    {path: "/v1/responses", resultMark: `"type":"function_call_output"`, reply: wiretest.ResponsesStream, result: responsesOutput},
	"chat":      {path: "/v1/chat/completions", resultMark: `"role":"tool"`, reply: wiretest.ChatStream, result: chatResult},
}

// chatResult finds, in a Chat Completions request, the content of the
// tool message answering id.
func chatResult(id string) func(map[string]any) (any, bool) {
	return func(m map[string]any) (any, bool) {
		msgs, _ := m["messages"].([]any)
		for _, msg := range msgs {
			o, _ := msg.(map[string]any)
			if o["role"] == "tool" && o["tool_call_id"] == id {
				return flattenContent(o["content"]), true
			}
		}
		return nil, false
	}
}

// opencodeMCPEnv is opencodeEnv for provider, or for "chat" an
// OpenAI-compatible provider (the AI SDK's Chat Completions client) at
// the proxy.
func opencodeMCPEnv(home, provider, addr, key string) []string {
	if provider != "chat" {
		return opencodeEnv(home, provider, addr, key, "")
	}
	env := opencodeEnv(home, "openai", addr, key, "")
	for i, e := range env {
		if strings.HasPrefix(e, "OPENCODE_CONFIG_CONTENT=") {
			env[i] = "OPENCODE_CONFIG_CONTENT=" + `{"autoupdate":false,"share":"disabled","model":"compat/test-model","small_model":"compat/test-model",` +
				`"provider":{"compat":{"npm":"@ai-sdk/openai-compatible","name":"Compat","options":{"baseURL":"` + addr + `/v1","apiKey":"` + key + `"},"models":{"test-model":{"name":"Test model","tool_call":true}}}}}`
		}
	}
	return env
}

// opencodeExperimentalTools are the settings that add opencode 1.18.33's
// optional tools to opencode run's list (lsp, websearch; the question and
// plan tools stay out of a run). Code mode (OPENCODE_EXPERIMENTAL_CODE_MODE)
// is left out: it offers the MCP tools inside one "execute" tool, as
// TypeScript signatures in its description, and no MCP tool in the array.
var opencodeExperimentalTools = []string{"OPENCODE_ENABLE_QUESTION_TOOL=1", "OPENCODE_ENABLE_EXA=1", "OPENCODE_EXPERIMENTAL_LSP_TOOL=1", "OPENCODE_EXPERIMENTAL_PLAN_MODE=1"}

// isOpencodeMCP tells the everything server's tools in opencode's
// requests (everything_TOOL).
func isOpencodeMCP(name string) bool { return strings.HasPrefix(name, "everything_") }

// opencodeMCP runs opencode with the everything server (opencode.json's
// mcp, type local, over stdio) against provider ("anthropic", "openai"
// or "chat") through a proxy started with flags, extraEnv added to
// opencode's. The script calls the first everything tool the upstream got
// as a stub that has required arguments (get-sum when none is a stub)
// with an argument missing, then answers. It returns the rig, the report
// and the called tool.
func opencodeMCP(t *testing.T, provider string, extraEnv []string, flags ...string) (*e2eRig, wireToolsReport, string) {
	bin := clientBin(t, "opencode")
	w := opencodeMCPWires[provider]
	called := make(chan string, 1)
	r := startE2E(t, func(req wiretest.Request) wiretest.Reply {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.Path, w.path) {
			return notModelCall(req)
		}
		m := bodyJSON(t, req.Body)
		model, _ := m["model"].(string)
		u := wiretest.Usage{Input: len(req.Body) / 4, Output: 20}
		tools, _ := toolsOf(t, req.Body)
		target := stubWithRequired(t, req.Body)
		if target == "" {
			target = mcpToolName(tools, "get-sum")
		}
		switch {
		case len(tools) == 0:
			return w.reply(model, "Sum", nil, u) // the title request
		case target == "" || strings.Contains(string(req.Body), w.resultMark):
			return w.reply(model, e2eAnswer, nil, u)
		}
		select {
		case called <- target:
		default:
		}
		return w.reply(model, "", []wiretest.Call{{ID: "call_mcp", Name: target, Args: `{"a":1}`}}, u)
	}, flags...)
	t.Cleanup(func() { dumpRequests(t, r) })
	entry, _ := json.Marshal(everythingServer(t))
	// opencode connects its MCP servers before its first model call (no
	// setting needed: every run's first request with tools had them).
	env := withOpencodeConfig(opencodeMCPEnv(t.TempDir(), provider, r.addr, "sk-test-opencode-mcp"),
		`"mcp":{"everything":{"type":"local","command":["node",`+string(entry)+`,"stdio"],"enabled":true}}`)
	out := runClient(t, r.work, append(env, extraEnv...), bin, "run", "Add 1 and 2 with the everything server's get-sum tool.")
	if !strings.Contains(out, e2eAnswer) {
		t.Fatalf("opencode did not give the scripted answer; output:\n%s", tail(out, 3000))
	}
	var target string
	select {
	case target = <-called:
	default:
		t.Fatalf("opencode offered no tool of the everything server to call")
	}
	return r, reportTools(t, r.up.Requests(), w.path, isOpencodeMCP), target
}

// stubWithRequired returns the first everything tool of a request that
// came as a stub and has required arguments, or "". opencode's MCP
// adapter closes every server tool's schema (additionalProperties false),
// which a stub's schema leaves out.
func stubWithRequired(t *testing.T, body []byte) string {
	for _, tl := range opencodeSchemas(t, body) {
		if isOpencodeMCP(tl.name) && tl.schema.AdditionalProperties == nil && len(tl.schema.Required) > 0 {
			return tl.name
		}
	}
	return ""
}

// opencodeTool is a tool of an opencode request with the members of its
// schema the tests read.
type opencodeTool struct {
	name   string
	schema struct {
		AdditionalProperties *bool    `json:"additionalProperties"`
		Required             []string `json:"required"`
	}
}

// opencodeSchemas reads the tools of a Messages or Responses body.
func opencodeSchemas(t *testing.T, body []byte) []opencodeTool {
	var m struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
			Parameters  json.RawMessage `json:"parameters"`
			Function    *struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Errorf("a request body is not JSON: %v", err)
	}
	var out []opencodeTool
	for _, tl := range m.Tools {
		o := opencodeTool{name: tl.Name}
		schema := tl.InputSchema
		switch {
		case tl.Function != nil: // Chat Completions
			o.name, schema = tl.Function.Name, tl.Function.Parameters
		case schema == nil:
			schema = tl.Parameters
		}
		_ = json.Unmarshal(schema, &o.schema)
		out = append(out, o)
	}
	return out
}

// withOpencodeConfig adds members to the configuration in env's
// OPENCODE_CONFIG_CONTENT.
func withOpencodeConfig(env []string, members string) []string {
	out := append([]string(nil), env...)
	for i, e := range out {
		if cfg, ok := strings.CutPrefix(e, "OPENCODE_CONFIG_CONTENT="); ok {
			out[i] = "OPENCODE_CONFIG_CONTENT=" + strings.TrimSuffix(cfg, "}") + "," + members + "}"
		}
	}
	return out
}

// TestProxyOpencodeMCPTools: through the proxy, with Anthropic's
// provider, OpenAI's (Responses) and an OpenAI-compatible one (Chat
// Completions), opencode offers an MCP server's tools as function tools
// named SERVER_TOOL (sorted by name among its own), whole, each schema
// closed (additionalProperties false), the same array on every request,
// and defers nothing; the server's argument check comes back as an error
// result (Messages: is_error; Responses and Chat Completions: the
// output's text). With
// --defer-tools the proxy stubs the MCP tools the first prompt does not
// select and no tool of opencode's own, those named SERVER_TOOL
// (apply_patch, list_mcp_resources) and its optional ones included; a
// stub's call whose arguments did not fit gets the full schema.
func TestProxyOpencodeMCPTools(t *testing.T) {
	for _, p := range []string{"anthropic", "openai", "chat"} {
		t.Run(p+"/default", func(t *testing.T) {
			r, rep, target := opencodeMCP(t, p, nil)
			rep.check(t, "opencode "+p)
			if rep.deferLoading != 0 || !rep.sameBytes {
				t.Errorf("opencode deferred tools itself (defer_loading on %d) or changed its tools array (same: %v)", rep.deferLoading, rep.sameBytes)
			}
			if res := opencodeResult(t, r, p); !strings.Contains(res, "MCP error -32602") || strings.Contains(res, "full input schema") {
				t.Errorf("the %s call missing an argument came back as %q, want the server's argument check alone", target, res)
			}
		})
		t.Run(p+"/--defer-tools", func(t *testing.T) {
			r, rep, target := opencodeMCP(t, p, nil, "--defer-tools")
			stubs := checkOpencodeDeferred(t, r, rep, p)
			res := opencodeResult(t, r, p)
			t.Logf("%d stubs; the call of the stub %s missing an argument came back as %q", stubs, target, res)
			if !strings.Contains(res, "MCP error -32602") || !strings.Contains(res, "Its full input schema (the tool list shows a short form): ") || !strings.Contains(res, `"additionalProperties":false`) {
				t.Errorf("the stub's call missing an argument came back without its full schema: %q", res)
			}
			checkStoreReadsCall(t, r.db, "call_mcp")
		})
		t.Run(p+"/--defer-tools,optional-tools", func(t *testing.T) {
			r, rep, _ := opencodeMCP(t, p, opencodeExperimentalTools, "--defer-tools")
			checkOpencodeDeferred(t, r, rep, p)
		})
	}
}

// checkOpencodeDeferred is checkDeferred for opencode, and checks that
// every tool the proxy stubbed is an everything tool: the stubs the proxy
// logged are as many as the everything tools whose schema the upstream got
// without the additionalProperties opencode gives each.
func checkOpencodeDeferred(t *testing.T, r *e2eRig, rep wireToolsReport, provider string) int {
	t.Helper()
	stubs := checkDeferred(t, r, rep, "opencode "+provider)
	// opencode's own tools, pinned, take their share of toolselect's
	// TopK; the MCP tools the first prompt ranks first fill the rest.
	if own := rep.tools - rep.mcp; stubs != rep.mcp-max(0, toolselect.DefaultTopK-own) {
		t.Errorf("%d tools went as stubs, want %d: %d MCP tools beside %d own of TopK %d", stubs, rep.mcp-max(0, toolselect.DefaultTopK-own), rep.mcp, own, toolselect.DefaultTopK)
	}
	w := opencodeMCPWires[provider]
	for _, q := range r.up.Requests() {
		if !strings.HasSuffix(q.Path, w.path) {
			continue
		}
		open, own := 0, 0
		tools := opencodeSchemas(t, q.Body)
		for _, tl := range tools {
			switch {
			case !isOpencodeMCP(tl.name):
				own++
			case tl.schema.AdditionalProperties == nil:
				open++
			}
		}
		if len(tools) > 0 && open != stubs {
			t.Errorf("the proxy logged %d stubs, the upstream got %d everything tools as stubs: a stub is one of opencode's own tools", stubs, open)
		}
		if len(tools) > 0 {
			t.Logf("opencode %s: %d own tools whole, %d of %d MCP tools as stubs", provider, own, open, len(tools)-own)
		}
	}
	return stubs
}

// opencodeResult returns the text of the scripted call's result as the
// upstream last got it.
func opencodeResult(t *testing.T, r *e2eRig, provider string) string {
	t.Helper()
	got := resultContents(t, r.up.Requests(), opencodeMCPWires[provider].result("call_mcp"))
	if len(got) == 0 {
		t.Fatalf("no request carried the result of call_mcp")
	}
	var s string
	_ = json.Unmarshal([]byte(got[len(got)-1]), &s)
	return s
}

// checkStoreReadsCall checks that the commands that read a store read
// the proxy's, whose conversations with calls show callID.
func checkStoreReadsCall(t *testing.T, db, callID string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List(context.Background())
	st.Close()
	if err != nil || len(list) == 0 {
		t.Fatalf("the store lists %d conversations (%v)", len(list), err)
	}
	withCalls := 0
	for _, c := range list {
		if c.Calls > 0 { // not opencode's title request
			withCalls++
			checkCLIReadsCall(t, db, c.ID, callID)
		}
	}
	if withCalls == 0 {
		t.Errorf("no conversation of the store's %d holds a call", len(list))
	}
}

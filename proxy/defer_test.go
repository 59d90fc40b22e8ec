package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/toolschema"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/toolselect"
)

// deferBuiltins are a client's own tools in the deferral tests: more
// than toolselect's threshold with the MCP tools, fewer than its TopK
// alone, so the first prompt's ranking decides which MCP tools go whole.
var deferBuiltins = []string{"Bash", "Read", "Edit", "Write", "Grep", "Glob"}

// deferMCP returns n MCP tools of server srv, as (name, description,
// schema), with long schemas; tool 0 is get-sum, the one the tests'
// prompt asks for.
func deferMCP(n int) [][3]string {
	out := [][3]string{{"get-sum", "Returns the sum of two numbers. Both must be finite.",
		`{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number","description":"Second number"}},"required":["a","b"],"$schema":"http://json-schema.org/draft-07/schema#"}`}}
	for i := 1; i < n; i++ {
		out = append(out, [3]string{fmt.Sprintf("widget-%02d", i), fmt.Sprintf("Manages widget catalogue %d. Lists, renames and archives widgets of the catalogue, with paging.", i),
			fmt.Sprintf(`{"type":"object","properties":{"catalogue":{"type":"string","description":"The catalogue %d to act on, by its id or its name."},"mode":{"type":"string","enum":["list","rename","archive"]},"page":{"type":"integer","minimum":1}},"required":["catalogue"]}`, i)})
	}
	return out
}

// deferShape is how a client's tools array looks in one wire format.
type deferShape struct {
	name, path string
	format     wireFormat
	// tools is the tools array: built-ins, then the MCP tools; defers
	// adds a tool the client defers itself.
	tools func(mcp [][3]string, defers bool) string
	// callName is the name a call of MCP tool base carries; call and
	// result are a history element of a call and of its result.
	callName  string
	body      func(prompt, tools string, steps []step, isError bool) []byte
	reply     func(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply
	replyCall wiretest.Call
	// hdr are the client's headers, and rule the MCP rule they give.
	hdr  map[string]string
	rule mcpRule
}

// opencodeUA is the User-Agent opencode 1.18.33 sends to Anthropic.
const opencodeUA = "opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14"

// opencodeBuiltins are opencode's own tools in the deferral tests, as many
// as deferBuiltins: names of the SERVER_TOOL form among them, and the
// MCP module's resource tools, whose schema is closed as an MCP tool's.
var opencodeBuiltins = []struct {
	name   string
	closed bool
}{{"bash", false}, {"read", false}, {"apply_patch", false}, {"plan_exit", false}, {"list_mcp_resources", true}, {"read_mcp_resource", true}}

// opencodeSchema is an everything tool's schema as opencode's MCP
// adapter sends it: closed.
func opencodeSchema(schema string) string {
	return strings.TrimSuffix(schema, "}") + `,"additionalProperties":false}`
}

// chatTool is a Chat Completions function tool.
func chatTool(name, desc, schema string) string {
	return `{"type":"function","function":{"name":` + mustJSON(name) + `,"description":` + mustJSON(desc) + `,"parameters":` + schema + `}}`
}

// opencodeTools is the tools array opencode sends: its own tools and
// the MCP tools, sorted by name as it sends them, each encoded by one.
func opencodeTools(mcp [][3]string, defers bool, one func(name, desc, schema string) string) string {
	type tool struct{ name, desc, schema string }
	var ts []tool
	for _, b := range opencodeBuiltins {
		schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`
		if b.closed {
			schema = `{"type":"object","properties":{"server":{"type":"string"}},"additionalProperties":false}`
		}
		ts = append(ts, tool{b.name, "opencode's own tool. It does many things.", schema})
	}
	for _, m := range mcp {
		ts = append(ts, tool{"everything_" + m[0], m[1], opencodeSchema(m[2])})
	}
	slices.SortFunc(ts, func(a, b tool) int { return strings.Compare(a.name, b.name) })
	var out []string
	for _, t := range ts {
		out = append(out, one(t.name, t.desc, t.schema))
	}
	if defers {
		out = append(out, one("later", "Deferred.", `{"type":"object"}`))
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "}") + `,"defer_loading":true}`
	}
	return "[" + strings.Join(out, ",") + "]"
}

var deferShapes = []deferShape{
	{
		name: "anthropic", path: "/v1/messages", format: anthropicFormat{}, reply: wiretest.AnthropicStream,
		callName: "mcp__everything__get-sum", replyCall: wiretest.Call{ID: "call_sum", Name: "mcp__everything__get-sum", Args: `{"a":1}`},
		tools: func(mcp [][3]string, defers bool) string {
			var ts []string
			for _, b := range deferBuiltins {
				ts = append(ts, `{"name":`+mustJSON(b)+`,"description":"The client's own `+b+` tool. It does many things.","input_schema":{"type":"object","properties":{"x":{"type":"string","description":"long"}}}}`)
			}
			for _, m := range mcp {
				ts = append(ts, `{"name":`+mustJSON("mcp__everything__"+m[0])+`,"description":`+mustJSON(m[1])+`,"input_schema":`+m[2]+`}`)
			}
			if defers {
				ts = append(ts, `{"name":"ToolSearch","description":"Fetches deferred tools.","input_schema":{"type":"object"}}`)
			}
			return "[" + strings.Join(ts, ",") + "]"
		},
		body: anthropicDeferBody,
	},
	{
		// Codex: the client's tools first, the server's in a namespace.
		name: "openai-responses", path: "/v1/responses", format: responsesFormat{}, reply: wiretest.ResponsesStream,
		callName: "mcp__everything__get_sum", replyCall: wiretest.Call{ID: "call_sum", Name: "get_sum", Namespace: "mcp__everything", Args: `{"a":1}`},
		tools: func(mcp [][3]string, defers bool) string {
			var ts, inner []string
			for _, b := range deferBuiltins {
				ts = append(ts, `{"type":"function","name":`+mustJSON(strings.ToLower(b))+`,"description":"The client's own tool. It does many things.","strict":false,"parameters":{"type":"object","properties":{"x":{"type":"string"}}}}`)
			}
			for _, m := range mcp {
				inner = append(inner, `{"type":"function","name":`+mustJSON(strings.ReplaceAll(m[0], "-", "_"))+`,"description":`+mustJSON(m[1])+`,"strict":false,"parameters":`+m[2]+`}`)
			}
			ts = append(ts, `{"type":"namespace","name":"mcp__everything","description":"# Everything server\nInstructions.","tools":[`+strings.Join(inner, ",")+`]}`, `{"type":"web_search","external_web_access":true}`)
			if defers {
				ts = append(ts, `{"type":"function","name":"later","description":"d","defer_loading":true,"parameters":{"type":"object"}}`)
			}
			return "[" + strings.Join(ts, ",") + "]"
		},
		body: func(prompt, tools string, steps []step, _ bool) []byte {
			items := []string{`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a test agent."}]}`,
				`{"type":"message","role":"user","content":[{"type":"input_text","text":` + mustJSON(prompt) + `}]}`}
			for _, s := range steps {
				ns, name, _ := strings.Cut(strings.TrimPrefix(s.tool, "mcp__"), "__")
				items = append(items,
					`{"type":"function_call","call_id":`+mustJSON(s.id)+`,"name":`+mustJSON(name)+`,"namespace":`+mustJSON("mcp__"+ns)+`,"arguments":`+mustJSON(s.args)+`}`,
					`{"type":"function_call_output","call_id":`+mustJSON(s.id)+`,"output":[{"type":"input_text","text":`+mustJSON(s.result)+`}]}`)
			}
			return []byte(`{"model":"test-model","instructions":"You are Codex.","input":[` + strings.Join(items, ",") + `],"tools":` + tools + `,"stream":true,"prompt_cache_key":"sess-1"}`)
		},
	},
	{
		// opencode over Messages: SERVER_TOOL, told by its closed
		// schema, in a request naming opencode.
		name: "opencode-anthropic", path: "/v1/messages", format: anthropicFormat{}, reply: wiretest.AnthropicStream,
		hdr: map[string]string{"User-Agent": opencodeUA}, rule: opencodeRule,
		callName: "everything_get-sum", replyCall: wiretest.Call{ID: "call_sum", Name: "everything_get-sum", Args: `{"a":1}`},
		tools: func(mcp [][3]string, defers bool) string {
			return opencodeTools(mcp, defers, func(name, desc, schema string) string {
				return `{"name":` + mustJSON(name) + `,"description":` + mustJSON(desc) + `,"input_schema":` + schema + `,"eager_input_streaming":true}`
			})
		},
		body: anthropicDeferBody,
	},
	{
		// opencode over Responses (store false, the whole history).
		name: "opencode-responses", path: "/v1/responses", format: responsesFormat{}, reply: wiretest.ResponsesStream,
		hdr: map[string]string{"User-Agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.40 runtime/bun/1.3.14"}, rule: opencodeRule,
		callName: "everything_get-sum", replyCall: wiretest.Call{ID: "call_sum", Name: "everything_get-sum", Args: `{"a":1}`},
		tools: func(mcp [][3]string, defers bool) string {
			return opencodeTools(mcp, defers, func(name, desc, schema string) string {
				return `{"type":"function","name":` + mustJSON(name) + `,"description":` + mustJSON(desc) + `,"parameters":` + schema + `,"strict":false}`
			})
		},
		body: func(prompt, tools string, steps []step, _ bool) []byte {
			items := []string{`{"role":"system","content":"You are opencode."}`,
				`{"role":"user","content":[{"type":"input_text","text":` + mustJSON(prompt) + `}]}`}
			for _, s := range steps {
				items = append(items,
					`{"type":"function_call","call_id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"arguments":`+mustJSON(s.args)+`}`,
					`{"type":"function_call_output","call_id":`+mustJSON(s.id)+`,"output":`+mustJSON(s.result)+`}`)
			}
			return []byte(`{"model":"test-model","input":[` + strings.Join(items, ",") + `],"store":false,"tools":` + tools + `,"tool_choice":"auto","stream":true}`)
		},
	},
	{
		// opencode over Chat Completions (an OpenAI-compatible provider).
		name: "opencode-chat", path: "/v1/chat/completions", format: chatFormat{}, reply: wiretest.ChatStream,
		hdr: map[string]string{"User-Agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14"}, rule: opencodeRule,
		callName: "everything_get-sum", replyCall: wiretest.Call{ID: "call_sum", Name: "everything_get-sum", Args: `{"a":1}`},
		tools: func(mcp [][3]string, _ bool) string {
			return opencodeTools(mcp, false, chatTool)
		},
		body: func(prompt, tools string, steps []step, _ bool) []byte {
			msgs := []string{`{"role":"system","content":"You are opencode."}`, `{"role":"user","content":` + mustJSON(prompt) + `}`}
			for _, s := range steps {
				msgs = append(msgs,
					`{"role":"assistant","content":"","tool_calls":[{"id":`+mustJSON(s.id)+`,"type":"function","function":{"name":`+mustJSON(s.tool)+`,"arguments":`+mustJSON(s.args)+`}}]}`,
					`{"role":"tool","tool_call_id":`+mustJSON(s.id)+`,"content":`+mustJSON(s.result)+`}`)
			}
			return []byte(`{"model":"test-model","max_tokens":32000,"messages":[` + strings.Join(msgs, ",") + `],"tools":` + tools + `,"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`)
		},
	},
	{
		// Gemini CLI: one tool of function declarations, the MCP ones
		// with a JSON Schema.
		name: "gemini", path: "/v1beta/models/test-model:streamGenerateContent", format: geminiFormat{}, reply: wiretest.GeminiStream,
		callName: "mcp_everything_get-sum", replyCall: wiretest.Call{ID: "call_sum", Name: "mcp_everything_get-sum", Args: `{"a":1}`},
		tools: func(mcp [][3]string, _ bool) string {
			var ds []string
			for _, b := range deferBuiltins {
				ds = append(ds, `{"name":`+mustJSON(strings.ToLower(b))+`,"description":"The client's own tool. It does many things.","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING"}}}}`)
			}
			for _, m := range mcp {
				ds = append(ds, `{"name":`+mustJSON("mcp_everything_"+m[0])+`,"description":`+mustJSON(m[1])+`,"parametersJsonSchema":`+m[2]+`}`)
			}
			return `[{"functionDeclarations":[` + strings.Join(ds, ",") + `]},{"googleSearch":{}}]`
		},
		body: func(prompt, tools string, steps []step, isError bool) []byte {
			cs := []string{`{"role":"user","parts":[{"text":` + mustJSON(prompt) + `}]}`}
			key := "output"
			if isError {
				key = "error"
			}
			for _, s := range steps {
				cs = append(cs,
					`{"role":"model","parts":[{"functionCall":{"id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"args":`+s.args+`}}]}`,
					`{"role":"user","parts":[{"functionResponse":{"id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"response":{`+mustJSON(key)+`:`+mustJSON(s.result)+`}}}]}`)
			}
			return []byte(`{"contents":[` + strings.Join(cs, ",") + `],"systemInstruction":{"parts":[{"text":"You are a test agent."}]},"tools":` + tools + `}`)
		},
	},
}

// anthropicDeferBody is a Messages request of the deferral tests: the
// prompt, then a call and its result per step.
func anthropicDeferBody(prompt, tools string, steps []step, isError bool) []byte {
	msgs := []string{`{"role":"user","content":[{"type":"text","text":` + mustJSON(prompt) + `}]}`}
	for _, s := range steps {
		msgs = append(msgs,
			`{"role":"assistant","content":[{"type":"tool_use","id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"input":`+s.args+`}]}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":`+mustJSON(s.id)+`,"content":`+mustJSON(s.result)+`,"is_error":`+fmt.Sprint(isError)+`}]}`)
	}
	return []byte(`{"model":"test-model","messages":[` + strings.Join(msgs, ",") + `],"system":[{"type":"text","text":"You are a test agent."}],"tools":` + tools + `,"stream":true}`)
}

const deferPrompt = "Add 1 and 2 with the get-sum tool."

// sentTools reads the tools array of a body as the proxy reads it.
func sentTools(t *testing.T, sh deferShape, body []byte) ([]offeredTool, string) {
	t.Helper()
	req, err := walkBody(body, sh.format, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, _, err := sh.format.(toolLister).offeredTools(body, req.toolsAt, sh.rule)
	if err != nil {
		t.Fatal(err)
	}
	return tools, string(body[req.toolsAt.Start:req.toolsAt.End])
}

// TestDeferToolsStubs: with DeferTools the MCP tools the first prompt
// does not select reach the upstream as toolselect.Stub, get-sum whole,
// the client's own tools byte for byte as sent, and every byte outside
// the tools array as the client sent it; the same tools bytes go on every
// request, and a call of a stub whose arguments did not fit gets its full
// schema appended (the same bytes in every later request). Without the
// option, or when the client defers tools itself, the body passes as sent.
func TestDeferToolsStubs(t *testing.T) {
	mcp := deferMCP(25)
	errText := "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: expected number, received undefined at b"
	for _, sh := range deferShapes {
		stubs := 25 - (toolselect.DefaultTopK - len(deferBuiltins))
		widgets := "Rename the widgets of catalogue 3."
		cases := []struct {
			name, prompt string
			opt, defers  bool
			wantStubs    int
			// wantNote: get-sum is a stub, so its call's error gets the
			// full schema.
			wantNote bool
		}{
			{name: "get-sum deferred", prompt: widgets, opt: true, wantStubs: stubs, wantNote: true},
			{name: "get-sum selected by the first prompt", prompt: deferPrompt, opt: true, wantStubs: stubs},
			{name: "off by default", prompt: widgets},
			{name: "client defers itself", prompt: widgets, opt: true, defers: true},
		}
		if sh.name == "gemini" || sh.name == "opencode-chat" {
			cases = cases[:3] // no Gemini or Chat Completions client is known to defer tools
		}
		for _, tc := range cases {
			t.Run(sh.name+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, &Options{DeferTools: tc.opt})
				tools := sh.tools(mcp, tc.defers)
				prompt := tc.prompt
				call := step{id: "call_sum", tool: sh.callName, args: `{"a":1}`, result: errText}
				again := step{id: "call_2", tool: sh.callName, args: `{"a":1,"b":2}`, result: "3"}
				u := wiretest.Usage{Input: 100, Output: 5}
				second := sh.replyCall
				second.ID, second.Args = again.id, again.args
				r.up.Enqueue(sh.reply("test-model", "", []wiretest.Call{sh.replyCall}, u), sh.reply("test-model", "", []wiretest.Call{second}, u), sh.reply("test-model", "Done.", nil, u))
				bodies := [][]byte{sh.body(prompt, tools, nil, true), sh.body(prompt, tools, []step{call}, true), sh.body(prompt, tools, []step{call, again}, true)}
				for i, b := range bodies {
					if status, _, got := r.post(sh.path, b, sh.hdr); status != 200 {
						t.Fatalf("request %d: status %d: %s", i+1, status, got)
					}
				}
				reqs := r.up.Requests()
				if !tc.opt || tc.defers {
					for i, q := range reqs {
						if !bytes.Equal(q.Body, bodies[i]) {
							t.Errorf("request %d was changed", i+1)
						}
					}
					return
				}
				checkStubs(t, sh, bodies[0], reqs[0].Body, tc.wantStubs)
				checkStoredTools(t, r, sh, reqs[0].Body)
				_, first := sentTools(t, sh, reqs[0].Body)
				for i, q := range reqs[1:] {
					if _, got := sentTools(t, sh, q.Body); got != first {
						t.Errorf("request %d sent other tools bytes than request 1 (cache break)", i+2)
					}
				}
				res := contents(t, sh.format, reqs[1].Body)
				if later := contents(t, sh.format, reqs[2].Body); len(res) != 1 || len(later) != 2 || res[0] != later[0] {
					t.Fatalf("the error result was sent with different bytes: %q", res)
				}
				want := errText
				if full := mcp[0][2]; tc.wantNote {
					if sh.rule == opencodeRule {
						full = opencodeSchema(full)
					}
					want += "\n\n" + toolschema.Note(toolschema.ShortForm, json.RawMessage(full))
				}
				if shown := resultText(res[0]); shown != want {
					t.Errorf("the stub's error result reached the upstream as\n%s\nwant\n%s", shown, want)
				}
				checkRestart(t, r, sh, bodies[2], first, res[0])
			})
		}
	}
}

// resultText is the text of a result's content as sent: a JSON string,
// or Codex's output blocks, passed as the client sent them.
func resultText(raw string) string {
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	var blocks []struct{ Text string }
	_ = json.Unmarshal([]byte(raw), &blocks)
	for _, b := range blocks {
		s += b.Text
	}
	return s
}

// checkRestart sends body to a second proxy on r's store (a restarted
// process) and checks that the upstream gets the tools bytes and the
// first result's content bytes the first proxy sent.
func checkRestart(t *testing.T, r *rig, sh deferShape, body []byte, tools, result string) {
	t.Helper()
	if err := r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	px, err := New(&Options{Upstream: r.up.URL, Store: r.st, Workspace: r.ws, DeferTools: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	r.srv = httptest.NewServer(px)
	t.Cleanup(r.srv.Close)
	r.up.Enqueue(sh.reply("test-model", "Done.", nil, wiretest.Usage{Input: 100, Output: 5}))
	if status, _, got := r.post(sh.path, body, sh.hdr); status != 200 {
		t.Fatalf("after a restart: status %d: %s", status, got)
	}
	reqs := r.up.Requests()
	last := reqs[len(reqs)-1].Body
	if _, got := sentTools(t, sh, last); got != tools {
		t.Errorf("a restarted proxy sent other tools bytes")
	}
	if got := contents(t, sh.format, last); got[0] != result {
		t.Errorf("a restarted proxy sent the error result as %s, before %s", got[0], result)
	}
}

// checkStoredTools checks that the store records the tools of the
// conversation's first request as the upstream got them (sent): stubs
// where the proxy sent stubs, since a request's Tools are the schemas
// sent.
func checkStoredTools(t *testing.T, r *rig, sh deferShape, sent []byte) {
	t.Helper()
	ctx := context.Background()
	if err := r.px.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	convs, err := r.st.List(ctx)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d stored conversations (%v), want 1", len(convs), err)
	}
	reqs, err := r.st.Requests(ctx, convs[0].ID, 1)
	if err != nil || len(reqs) == 0 {
		t.Fatalf("%d stored requests of turn 1 (%v)", len(reqs), err)
	}
	want, _ := sentTools(t, sh, sent)
	got := reqs[0].Tools
	if len(got) != len(want) {
		t.Fatalf("the store records %d tools, the upstream got %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Name != w.spec.Name || got[i].Description != w.spec.Description || !jsonEqual(got[i].InputSchema, w.spec.InputSchema) {
			t.Errorf("stored tool %d: %s %q %s; the upstream got %s %q %s", i, got[i].Name, got[i].Description, got[i].InputSchema, w.spec.Name, w.spec.Description, w.spec.InputSchema)
		}
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// checkStubs checks the tools the upstream got against the client's: the
// client's own tools as sent, wantStubs MCP tools as their stub (get-sum
// among them: the prompt asks for widgets), the others whole, and the body
// outside the tools array unchanged.
func checkStubs(t *testing.T, sh deferShape, client, sent []byte, wantStubs int) {
	t.Helper()
	ct, craw := sentTools(t, sh, client)
	st, sraw := sentTools(t, sh, sent)
	if len(ct) != len(st) {
		t.Fatalf("the upstream got %d tools, the client sent %d", len(st), len(ct))
	}
	if i := strings.Index(string(client), craw); i < 0 || string(client[:i]) != string(sent[:i]) || string(client[i+len(craw):]) != string(sent[i+len(sraw):]) {
		t.Errorf("bytes outside the tools array were changed")
	}
	stubs := 0
	for i := range ct {
		c, s := ct[i], st[i]
		if !c.mcp {
			if s.spec.Description != c.spec.Description || !bytes.Equal(s.spec.InputSchema, c.spec.InputSchema) {
				t.Errorf("the client's own tool %s was changed", c.spec.Name)
			}
			continue
		}
		if !toolselect.Shortened(s.spec, c.spec) {
			continue
		}
		stubs++
		want := toolselect.Stub(c.spec)
		if s.spec.Description != want.Description || !bytes.Equal(s.spec.InputSchema, want.InputSchema) {
			t.Errorf("%s was sent as %q %s, want its stub %q %s", c.spec.Name, s.spec.Description, s.spec.InputSchema, want.Description, want.InputSchema)
		}
	}
	t.Logf("%s: tools %d → %d bytes, %d of %d tools as stubs", sh.name, len(craw), len(sraw), stubs, len(ct))
	if stubs != wantStubs {
		t.Errorf("%d tools were sent as stubs, want %d", stubs, wantStubs)
	}
}

// TestElemHashesAfterToolEdits: a history element's hash as sent is the
// hash of its bytes in the spliced body, whether the edits before it are
// in the tools array (before the history, as a client may order its
// members) or in earlier elements, so a rewritten tools array is no cache
// break.
func TestElemHashesAfterToolEdits(t *testing.T) {
	mcp := deferMCP(25)
	tools := deferShapes[0].tools(mcp, false)
	history := `[{"role":"user","content":"Rename the widgets."},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"mcp__everything__widget-01","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"done"}]}]`
	for _, tc := range []struct{ name, body string }{
		{"tools first", `{"model":"m","tools":` + tools + `,"messages":` + history + `}`},
		{"tools last", `{"model":"m","messages":` + history + `,"tools":` + tools + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.body)
			req, err := walkBody(in, anthropicFormat{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			offered, _, err := anthropicFormat{}.offeredTools(in, req.toolsAt, prefixRule)
			if err != nil {
				t.Fatal(err)
			}
			var toolEdits []edit
			for _, o := range offered[len(deferBuiltins):] {
				toolEdits = append(toolEdits, edit{Span: o.desc, New: []byte(`"short"`)})
			}
			res := req.Items[len(req.Items)-1].Result
			edits := mergeEdits([]edit{{Span: res.Content, New: []byte(`"cut"`)}}, toolEdits)
			out := splice(in, edits)
			sent, err := walkBody(out, anthropicFormat{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			seed := maphash.MakeSeed()
			req.hash(seed)
			got := sentBody{in: in, edits: edits}.elemSums(seed, req.Elems, req.elemSums)
			var want []uint64
			for _, e := range sent.Elems {
				want = append(want, maphash.Bytes(seed, out[e.Start:e.End]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("hashes of the elements as sent %v, want %v", got, want)
			}
		})
	}
}

// TestArgumentError: the texts that say a call's arguments did not fit
// its schema, as the real clients bring them back, and some that do not.
func TestArgumentError(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received undefined at b", true}, // Claude Code, Codex
		{"Wall time: 0.0105 seconds\nOutput:\nMCP error -32602: Input validation error: …", true},                                                       // Codex's output blocks, joined
		{"<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing</tool_use_error>", true},
		{"params must have required property 'b'", true}, // Gemini CLI's own check
		{"params/a must be number", true},
		{"MCP error -32603: internal error", false},
		{"3", false},
		{"the params must be set in the config file", false},
	} {
		if got := argumentError(tc.text); got != tc.want {
			t.Errorf("argumentError(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestDeferToolsOnTools100 measures --defer-tools on a larger catalogue:
// the bench's tools100 set (Claude Code's 16 tools and 84 others), the 84
// named as one MCP server's (mcp__srv__NAME) in a Messages request, with
// one first prompt per subject. It logs the tools bytes as sent and as
// forwarded; docs/design.md quotes them.
func TestDeferToolsOnTools100(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "bench", "testdata", "tools100.json"))
	if err != nil {
		t.Skipf("the bench's tools100 set: %v", err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools[16:] {
		tl["name"] = "mcp__srv__" + tl["name"].(string)
	}
	arr, _ := json.Marshal(tools)
	for _, prompt := range []string{"Revoke the API key that leaked.", "Fix the failing test in parser_test.go.", "Schedule a meeting with the design team."} {
		r := newRig(t, &Options{DeferTools: true})
		r.up.Enqueue(wiretest.AnthropicStream("test-model", "Done.", nil, wiretest.Usage{Input: 10, Output: 1}))
		body := []byte(`{"model":"test-model","messages":[{"role":"user","content":` + mustJSON(prompt) + `}],"tools":` + string(arr) + `,"stream":true}`)
		if status, _, got := r.post("/v1/messages", body, nil); status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		sent := r.up.Requests()[0].Body
		checkStubs(t, deferShapes[0], body, sent, 80) // of TopK 20: 16 pinned, "me" kept as identity, 3 ranked
	}
}

// TestDeferToolsMemberOrder: a tool whose schema comes before its
// description is stubbed as well, and the body stays valid JSON.
func TestDeferToolsMemberOrder(t *testing.T) {
	var ts []string
	for _, b := range deferBuiltins {
		ts = append(ts, `{"name":`+mustJSON(b)+`,"input_schema":{"type":"object"},"description":"Own."}`)
	}
	for _, m := range deferMCP(25) {
		ts = append(ts, `{"input_schema":`+m[2]+`,"name":`+mustJSON("mcp__everything__"+m[0])+`,"description":`+mustJSON(m[1])+`}`)
	}
	body := deferShapes[0].body("Rename the widgets of catalogue 3.", "["+strings.Join(ts, ",")+"]", nil, false)
	r := newRig(t, &Options{DeferTools: true})
	r.up.Enqueue(wiretest.AnthropicStream("test-model", "Done.", nil, wiretest.Usage{Input: 10, Output: 1}))
	if status, _, got := r.post("/v1/messages", body, nil); status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	sent := r.up.Requests()[0].Body
	if !json.Valid(sent) {
		t.Fatalf("the upstream got a body that is not JSON")
	}
	checkStubs(t, deferShapes[0], body, sent, 25-(toolselect.DefaultTopK-len(deferBuiltins)))
}

// TestMCPRule: which tools of a request are an MCP server's, by the
// client the request's User-Agent names: opencode's SERVER_TOOL with a
// closed schema on its requests only, never one of its own tools (named
// SERVER_TOOL as well, or closed as its resource tools are), and the
// prefix rules on the other clients' requests only.
func TestMCPRule(t *testing.T) {
	closed := `{"type":"object","properties":{"a":{"type":"number"}},"additionalProperties":false}`
	open := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"number"}}}`
	msgs := func(tools ...[2]string) string {
		var ts []string
		for _, tl := range tools {
			ts = append(ts, `{"name":`+mustJSON(tl[0])+`,"description":"d","input_schema":`+tl[1]+`}`)
		}
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(ts, ",") + `]}`
	}
	resp := func(tools ...[2]string) string {
		var ts []string
		for _, tl := range tools {
			ts = append(ts, `{"type":"function","name":`+mustJSON(tl[0])+`,"description":"d","parameters":`+tl[1]+`,"strict":false}`)
		}
		return `{"model":"m","input":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(ts, ",") + `]}`
	}
	chat := func(tools ...[2]string) string {
		var ts []string
		for _, tl := range tools {
			ts = append(ts, chatTool(tl[0], "d", tl[1]))
		}
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(ts, ",") + `]}`
	}
	own := [][2]string{{"bash", open}, {"apply_patch", open}, {"plan_exit", open}, {"list_mcp_resources", closed},
		{"list_mcp_resource_templates", closed}, {"read_mcp_resource", closed}}
	opencodeSet := append(slices.Clone(own), [2]string{"everything_get-sum", closed}, [2]string{"my_server_get-env", closed}, [2]string{"everything_echo", open})
	claudeSet := [][2]string{{"Bash", open}, {"mcp__everything__get-sum", open}, {"everything_get-sum", closed}}
	for _, tc := range []struct {
		name   string
		ua     string
		format wireFormat
		body   string
		want   []string
	}{
		{"opencode, Messages", opencodeUA, anthropicFormat{}, msgs(opencodeSet...), []string{"everything_get-sum", "my_server_get-env"}},
		{"opencode, Responses", "opencode/1.18.33 ai-sdk/provider-utils/4.0.40 runtime/bun/1.3.14", responsesFormat{}, resp(opencodeSet...), []string{"everything_get-sum", "my_server_get-env"}},
		{"opencode's tools from another client", "", anthropicFormat{}, msgs(opencodeSet...), nil},
		{"opencode's tools from a client named like it", "my-opencode/1.0", responsesFormat{}, resp(opencodeSet...), nil},
		{"Claude Code", "claude-cli/2.1.197 (external, sdk-cli)", anthropicFormat{}, msgs(claudeSet...), []string{"mcp__everything__get-sum"}},
		{"opencode: its rule alone, no prefix", opencodeUA, anthropicFormat{}, msgs(claudeSet...), []string{"everything_get-sum"}},
		{"opencode's only own tools", opencodeUA, responsesFormat{}, resp(own...), nil},
		{"opencode, Chat Completions", "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14", chatFormat{}, chat(opencodeSet...), []string{"everything_get-sum", "my_server_get-env"}},
		{"Chat Completions from another client: no rule", "", chatFormat{}, chat(append(opencodeSet, claudeSet...)...), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.ua != "" {
				h.Set("User-Agent", tc.ua)
			}
			body := []byte(tc.body)
			req, err := walkBody(body, tc.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			tools, _, err := tc.format.(toolLister).offeredTools(body, req.toolsAt, requestRule(h))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range tools {
				if tl.mcp {
					got = append(got, tl.spec.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("MCP tools %q, want %q", got, tc.want)
			}
		})
	}
}

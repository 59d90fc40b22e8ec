package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// step is one tool round of a scripted history: the call the model made
// and the result the client sends back.
type step struct {
	id, tool, args, result string
}

// wireCase is one wire format as a client speaks it: the request path, a
// request body for a history, and the upstream's answer.
type wireCase struct {
	name   string
	path   string
	format wireFormat
	body   func(model, prompt string, steps []step) []byte
	reply  func(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var wireCases = []wireCase{
	{
		name: "anthropic", path: "/v1/messages", format: anthropicFormat{}, reply: wiretest.AnthropicStream,
		body: func(model, prompt string, steps []step) []byte {
			msgs := []string{`{"role":"user","content":[{"type":"text","text":` + mustJSON(prompt) + `,"cache_control":{"type":"ephemeral"}}]}`}
			for _, s := range steps {
				msgs = append(msgs,
					`{"role":"assistant","content":[{"type":"tool_use","id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"input":`+s.args+`}]}`,
					`{"role":"user","content":[{"type":"tool_result","tool_use_id":`+mustJSON(s.id)+`,"content":`+mustJSON(s.result)+`}]}`)
			}
			return []byte(`{"model":` + mustJSON(model) + `, "max_tokens": 1024,"messages":[` + strings.Join(msgs, ",") +
				`],"system":[{"type":"text","text":"You are a test agent."}],"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}],"x_unknown":{"kept":1.50},"stream":true}`)
		},
	},
	{
		name: "openai-responses", path: "/v1/responses", format: responsesFormat{}, reply: wiretest.ResponsesStream,
		body: func(model, prompt string, steps []step) []byte {
			items := []string{`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a test agent."}]}`,
				`{"type":"message","role":"user","content":[{"type":"input_text","text":` + mustJSON(prompt) + `}]}`}
			for _, s := range steps {
				items = append(items,
					`{"type":"function_call","call_id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"arguments":`+mustJSON(s.args)+`}`,
					`{"type":"function_call_output","call_id":`+mustJSON(s.id)+`,"output":`+mustJSON(s.result)+`}`)
			}
			return []byte(`{"model":` + mustJSON(model) + `,"stream":true,"input":[` + strings.Join(items, ",") +
				`],"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],"x_unknown":[1, 2]}`)
		},
	},
	{
		name: "openai-chat", path: "/v1/chat/completions", format: chatFormat{}, reply: wiretest.ChatStream,
		body: func(model, prompt string, steps []step) []byte {
			msgs := []string{`{"role":"system","content":"You are a test agent."}`, `{"role":"user","content":` + mustJSON(prompt) + `}`}
			for _, s := range steps {
				msgs = append(msgs,
					`{"role":"assistant","content":null,"tool_calls":[{"id":`+mustJSON(s.id)+`,"type":"function","function":{"name":`+mustJSON(s.tool)+`,"arguments":`+mustJSON(s.args)+`}}]}`,
					`{"role":"tool","tool_call_id":`+mustJSON(s.id)+`,"content":`+mustJSON(s.result)+`}`)
			}
			return []byte(`{"model":` + mustJSON(model) + `,"stream":true,"stream_options":{"include_usage":true},"messages":[` + strings.Join(msgs, ",") +
				`],"tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object"}}}]}`)
		},
	},
	{
		name: "gemini", path: "/v1beta/models/gemini-test:streamGenerateContent", format: geminiFormat{}, reply: wiretest.GeminiStream,
		body: geminiBody,
	},
	{
		name: "gemini-code-assist", path: "/v1internal:streamGenerateContent", format: codeAssistFormat{}, reply: codeAssistStream,
		body: func(model, prompt string, steps []step) []byte {
			gemini := geminiBody(model, prompt, steps)
			return []byte(`{"model":` + mustJSON(model) + `,"project":"p-1","user_prompt_id":"u-1","request":` + string(gemini) + `}`)
		},
	},
}

// geminiBody is a Gemini API request of the wire tests.
func geminiBody(model, prompt string, steps []step) []byte {
	cs := []string{`{"role":"user","parts":[{"text":` + mustJSON(prompt) + `}]}`}
	for _, s := range steps {
		cs = append(cs,
			`{"role":"model","parts":[{"functionCall":{"id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"args":`+s.args+`}}]}`,
			`{"role":"user","parts":[{"functionResponse":{"id":`+mustJSON(s.id)+`,"name":`+mustJSON(s.tool)+`,"response":{"output":`+mustJSON(s.result)+`}}}]}`)
	}
	return []byte(`{"contents":[` + strings.Join(cs, ",") + `],"systemInstruction":{"parts":[{"text":"You are a test agent."}]},` +
		`"tools":[{"functionDeclarations":[{"name":"run_shell_command","parameters":{"type":"object"}}]}]}`)
}

// codeAssistStream is wiretest.GeminiStream as Code Assist sends it: each
// event's response under "response".
func codeAssistStream(model, text string, calls []wiretest.Call, u wiretest.Usage) wiretest.Reply {
	rep := wiretest.GeminiStream(model, text, calls, u)
	for i, e := range rep.Events {
		rep.Events[i].Data = `{"response":` + e.Data + `,"traceId":"t"}`
	}
	return rep
}

// lockFile is a deterministic package-lock.json of about n bytes whose
// "zod" entry sits in the middle.
func lockFile(n int) string {
	var b strings.Builder
	b.WriteString("{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n")
	for i := 0; b.Len() < n; i++ {
		name := fmt.Sprintf("pkg-%05d", i)
		if i == 700 {
			name = "zod"
		}
		fmt.Fprintf(&b, "    \"node_modules/%s\": {\n      \"version\": \"%d.%d.%d\",\n      \"resolved\": \"https://example.invalid/%s/-/%s-%d.tgz\",\n      \"integrity\": \"sha512-%064d\"\n    },\n",
			name, i%9+1, i%13, i%7, name, name, i, i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// rig is a proxy in front of a wiretest upstream, with a store.
type rig struct {
	t        *testing.T
	up       *wiretest.Server
	px       *Proxy
	srv      *httptest.Server
	st       store.DB
	ws       string
	log      *syncWriter
	dbPath   string
	upstream string
}

func newRig(t *testing.T, opts *Options) *rig {
	t.Helper()
	r := &rig{t: t, up: wiretest.New(t), ws: t.TempDir(), log: &syncWriter{w: &bytes.Buffer{}}}
	r.dbPath = filepath.Join(r.ws, "harness.db")
	st, err := sqlite.Open(context.Background(), r.dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	t.Cleanup(func() { st.Close() })
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Upstream, o.Store, o.Workspace, o.Log = r.up.URL, st, r.ws, r.log
	px, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	r.px = px
	r.srv = httptest.NewServer(px)
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() { px.Close() })
	return r
}

// post sends a request as a client would and returns the status, headers
// and body the client got.
func (r *rig) post(path string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, got
}

// syncWriter serialises writes to a buffer read by the test.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// contents returns the raw bytes of every tool result's content in body,
// as format f reads them.
func contents(t *testing.T, f wireFormat, body []byte) []string {
	t.Helper()
	req, err := walkBody(body, f, nil)
	if err != nil {
		t.Fatalf("%s: parse: %v", f.name(), err)
	}
	var out []string
	for _, it := range req.Items {
		if it.Result != nil {
			out = append(out, string(body[it.Result.Content.Start:it.Result.Content.End]))
		}
	}
	return out
}

// elements returns the raw bytes of the history elements of body.
func elements(t *testing.T, f wireFormat, body []byte) []string {
	t.Helper()
	req, err := walkBody(body, f, nil)
	if err != nil {
		t.Fatalf("%s: parse: %v", f.name(), err)
	}
	out := make([]string, len(req.Elems))
	for i, e := range req.Elems {
		out[i] = string(body[e.Start:e.End])
	}
	return out
}

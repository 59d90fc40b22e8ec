package mcptool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hangBound is the only time limit these tests set on work that should
// finish: long enough that a loaded machine never reaches it, short enough
// that a hang fails the test instead of the whole binary's -timeout.
const hangBound = 10 * time.Minute

// openTest opens the config's servers and closes them when the test ends.
// Unless opts says otherwise, starts and calls are bounded by hangBound
// only, so a slow machine cannot turn a large payload into a timeout.
func openTest(t *testing.T, opts *Options, servers ...ServerConfig) (*Set, map[string]harness.Tool) {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = hangBound
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = hangBound
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	set, err := Open(ctx, &Config{Servers: servers}, &o)
	t.Cleanup(func() { set.Close() })
	if err != nil {
		t.Fatal(err)
	}
	tools, skipped, err := set.Tools(ctx)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("Tools: %v, skipped %v", err, skipped)
	}
	byName := map[string]harness.Tool{}
	for _, tl := range tools {
		byName[tl.Spec.Name] = tl
	}
	return set, byName
}

func call(t *testing.T, tools map[string]harness.Tool, name, args string) *harness.ToolResult {
	t.Helper()
	tl, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	res, err := tl.Func(context.Background(), &harness.ToolCall{ID: "c1", Name: name, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestStdioListPagesAndRisk(t *testing.T) {
	_, tools := openTest(t, nil, stdioServer(t, "local"))
	// The server pages its list 3 at a time: all 12 must be there.
	if len(tools) != testServerTools {
		t.Fatalf("got %d tools, want %d (paging)", len(tools), testServerTools)
	}
	for name, want := range map[string]harness.Risk{
		"echo":     harness.ReadOnly,
		"crash":    harness.Destructive | harness.Network,
		"add_tool": harness.Idempotent,
		"mutate":   harness.Destructive,
	} {
		if got := tools[name].Spec.Risk; got != want {
			t.Errorf("%s: risk %v, want %v", name, got, want)
		}
	}
	if d := tools["echo"].Spec.Description; d != "Echo the text back." {
		t.Errorf("description %q", d)
	}
	if !strings.Contains(string(tools["echo"].Spec.InputSchema), `"text"`) {
		t.Errorf("schema %s", tools["echo"].Spec.InputSchema)
	}
	res := call(t, tools, "echo", `{"text":"hello"}`)
	if res.IsError || res.FullText() != "hello" {
		t.Fatalf("echo: %+v", res)
	}
	if res.Meta["mcp_server"] != "local" {
		t.Errorf("meta %v", res.Meta)
	}
}

func TestRiskOverrides(t *testing.T) {
	sc := stdioServer(t, "local")
	sc.Risk = harness.ReadOnly | harness.Network
	sc.ToolRisk = map[string]harness.Risk{"crash": harness.Destructive}
	_, tools := openTest(t, nil, sc)
	if r := tools["mutate"].Spec.Risk; r != harness.ReadOnly|harness.Network {
		t.Errorf("server override: %v", r)
	}
	if r := tools["crash"].Spec.Risk; r != harness.Destructive {
		t.Errorf("tool override: %v", r)
	}
}

func TestContentKinds(t *testing.T) {
	_, tools := openTest(t, nil, stdioServer(t, "local"))
	res := call(t, tools, "media", `{}`)
	kinds := []harness.PartType{}
	for _, p := range res.Parts {
		kinds = append(kinds, p.Type)
	}
	want := []harness.PartType{"text", "image", "text", "text", "text", "text", "image"}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds %v, want %v", kinds, want)
		}
	}
	if string(res.Parts[1].Data) != string(testPNG) || res.Parts[1].MIMEType != "image/png" {
		t.Errorf("image part: %q %d bytes", res.Parts[1].MIMEType, len(res.Parts[1].Data))
	}
	if !strings.Contains(res.Parts[2].Text, "audio/wav, 52 bytes") {
		t.Errorf("audio note %q", res.Parts[2].Text)
	}
	if l := res.Parts[3].Text; !strings.Contains(l, "file:///docs/report.pdf") || !strings.Contains(l, "2,048 bytes") || !strings.Contains(l, "quarterly") {
		t.Errorf("resource link %q", l)
	}
	if !strings.Contains(res.Parts[4].Text, "remember the milk") {
		t.Errorf("embedded text %q", res.Parts[4].Text)
	}
	if !strings.Contains(res.Parts[5].Text, "binary, 15 bytes") {
		t.Errorf("embedded blob %q", res.Parts[5].Text)
	}
	blobs, _ := res.Meta[metaBlobs].([]blob)
	if len(blobs) != 2 || string(blobs[0].Data) != string(testWAV) || blobs[0].Part != 2 || blobs[1].Part != 5 || string(blobs[1].Data) != "%PDF-1.7 binary" {
		t.Errorf("blobs %+v", blobs)
	}
	// The model is sent each payload once: the bytes are the parts'.
	sum := 0
	for _, p := range res.Parts {
		sum += p.Size()
	}
	if res.PayloadSize() != sum {
		t.Errorf("payload %d, parts %d", res.PayloadSize(), sum)
	}
}

func TestStructuredCountedOnce(t *testing.T) {
	_, tools := openTest(t, nil, stdioServer(t, "local"))

	same := call(t, tools, "structured", `{}`)
	if len(same.Structured) == 0 {
		t.Fatal("structured content lost")
	}
	if got, want := same.PayloadSize(), len(same.Parts[0].Text); got != want {
		t.Errorf("JSON sent as text and structured: payload %d, want %d (once)", got, want)
	}

	wrapped := call(t, tools, "wrapped", `{}`)
	if len(wrapped.Structured) != 0 {
		t.Errorf("a wrapper of the text is kept as Structured: %s", wrapped.Structured)
	}
	if got := wrapped.PayloadSize(); got != len(wrappedText) {
		t.Errorf("wrapped: payload %d, want %d (once)", got, len(wrappedText))
	}
	shape, _ := json.Marshal(wrapped.Meta[metaStructuredShape])
	if string(shape) != `{"content":"[text part 1]","lines":3}` {
		t.Errorf("shape %s", shape)
	}

	only := call(t, tools, "only_structured", `{}`)
	if only.FullText() != `{"id":7,"name":"seven"}` {
		t.Errorf("structured only: %q", only.FullText())
	}
}

func TestToolErrorIsError(t *testing.T) {
	_, tools := openTest(t, nil, stdioServer(t, "local"))
	res := call(t, tools, "fail", `{}`)
	if !res.IsError || res.FullText() != "no such record: 42" {
		t.Fatalf("%+v", res)
	}
	// A protocol error (unknown tool) leaves the session up.
	set, _ := openTest(t, nil, stdioServer(t, "other"))
	r, err := set.serverNamed("other").Call(context.Background(), "no_such_tool", nil)
	if err != nil || !r.IsError || !strings.Contains(r.FullText(), "refused") {
		t.Fatalf("%v %+v", err, r)
	}
	if set.serverNamed("other").Restarts() != 0 {
		t.Error("a refused call restarted the server")
	}
}

func TestCallTimeout(t *testing.T) {
	sc := stdioServer(t, "local")
	sc.Timeout = 200 * time.Millisecond
	set, tools := openTest(t, nil, sc)
	// The call sleeps far longer than hangBound: only the 200 ms timeout
	// can end it before the test fails.
	res := call(t, tools, "sleep", sleepArgs(int(3*hangBound/time.Millisecond), ""))
	if !res.IsError || !res.TimedOut || !strings.Contains(res.FullText(), "200ms") {
		t.Fatalf("%+v", res)
	}
	if res := call(t, tools, "echo", `{"text":"still here"}`); res.FullText() != "still here" {
		t.Fatalf("after a timeout: %+v", res)
	}
	if set.serverNamed("local").Restarts() != 0 {
		t.Error("a timeout restarted the server")
	}
}

func TestServerExitsMidCall(t *testing.T) {
	set, tools := openTest(t, nil, stdioServer(t, "local"))
	res := call(t, tools, "crash", `{}`)
	text := res.FullText()
	if !res.IsError || !strings.Contains(text, `"local" stopped during the call`) || !strings.Contains(text, "panic: boom in the crash handler") || !strings.Contains(text, "exit status 2") {
		t.Fatalf("%+v", text)
	}
	if res := call(t, tools, "echo", `{"text":"back"}`); res.IsError || res.FullText() != "back" {
		t.Fatalf("after the crash: %+v", res)
	}
	if n := set.serverNamed("local").Restarts(); n != 1 {
		t.Errorf("restarts %d", n)
	}
}

func TestServerKilledMidCall(t *testing.T) {
	set, tools := openTest(t, nil, stdioServer(t, "local"))
	srv := set.serverNamed("local")
	pid := srv.PID()
	if pid == 0 {
		t.Fatal("no pid")
	}
	mark := filepath.Join(t.TempDir(), "running")
	go func() {
		awaitFile(t, mark)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}()
	// The call outlasts hangBound: only noticing the death ends it.
	res := call(t, tools, "sleep", sleepArgs(int(3*hangBound/time.Millisecond), mark))
	if !res.IsError || !strings.Contains(res.FullText(), "stopped during the call") || !strings.Contains(res.FullText(), "killed") {
		t.Fatalf("%+v", res.FullText())
	}
	if res := call(t, tools, "echo", `{"text":"again"}`); res.FullText() != "again" {
		t.Fatalf("after the kill: %+v", res)
	}
	if srv.PID() == pid || srv.PID() == 0 {
		t.Errorf("pid %d after restart (was %d)", srv.PID(), pid)
	}
}

func TestStartFailureNamesServerWithStderr(t *testing.T) {
	bad := stdioServer(t, "database")
	bad.Env[serverEnv] = "fail-start"
	ctx := context.Background()
	set, err := Open(ctx, &Config{Servers: []ServerConfig{stdioServer(t, "good"), bad}}, &Options{StartTimeout: hangBound})
	defer set.Close()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{`"database" failed to start`, "exit status 3", "fatal: cannot open database /nonexistent/db.sqlite"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if len(set.serverList()) != 1 || set.serverList()[0].Name() != "good" {
		t.Errorf("the good server is not kept: %v", set.serverList())
	}

	_, err = connect(ctx, ServerConfig{Name: "ghost", Type: typeStdio, Command: "/nonexistent/mcp-server"}, nil)
	if err == nil || !strings.Contains(err.Error(), `"ghost" failed to start`) {
		t.Errorf("missing command: %v", err)
	}
}

func TestListChangedRefreshes(t *testing.T) {
	changed := make(chan string, 4)
	set, tools := openTest(t, &Options{OnToolsChanged: func(s string) { changed <- s }}, stdioServer(t, "local"))
	if res := call(t, tools, "add_tool", `{"name":"fresh"}`); res.IsError {
		t.Fatal(res.FullText())
	}
	select {
	case s := <-changed:
		if s != "local" {
			t.Errorf("changed server %q", s)
		}
	case <-time.After(hangBound):
		t.Fatal("no list_changed")
	}
	all, _, err := set.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range all {
		if tl.Spec.Name == "fresh" {
			found = true
			res, err := tl.Func(context.Background(), &harness.ToolCall{Name: "fresh", Args: json.RawMessage(`{}`)})
			if err != nil || res.FullText() != "hi from fresh" {
				t.Errorf("fresh: %v %+v", err, res)
			}
		}
	}
	if !found || len(all) != testServerTools+1 {
		t.Fatalf("%d tools after list_changed, fresh found %v", len(all), found)
	}
}

func TestMessageLargerThanLimitRestarts(t *testing.T) {
	set, tools := openTest(t, &Options{MaxMessageBytes: 1 << 20}, stdioServer(t, "local"))
	res := call(t, tools, "big", `{"bytes":2000000}`)
	if !res.IsError || !strings.Contains(res.FullText(), "stopped during the call") {
		t.Fatalf("%.300s", res.FullText())
	}
	if res := call(t, tools, "big", `{"bytes":1000}`); res.IsError || len(res.FullText()) != 1000 {
		t.Fatalf("after restart: %.200s", res.FullText())
	}
	if set.serverNamed("local").Restarts() != 1 {
		t.Error("not restarted")
	}
}

func TestNamespacedOnCollision(t *testing.T) {
	_, tools := openTest(t, &Options{Reserved: []string{"mutate"}}, stdioServer(t, "alpha"), stdioServer(t, "beta-2"))
	if len(tools) != 2*testServerTools {
		t.Fatalf("%d tools", len(tools))
	}
	for _, n := range []string{"alpha__echo", "beta-2__echo", "alpha__mutate", "beta-2__mutate"} {
		if _, ok := tools[n]; !ok {
			t.Errorf("no %s", n)
		}
	}
	res := call(t, tools, "beta-2__echo", `{"text":"b"}`)
	if res.FullText() != "b" || res.Meta["mcp_server"] != "beta-2" || res.Meta["mcp_tool"] != "echo" {
		t.Errorf("%+v", res)
	}
}

// TestStreamableHTTP reaches a go-sdk server over streamable HTTP with a
// header taken from the environment, and survives a dropped connection.
func TestStreamableHTTP(t *testing.T) {
	srv := newTestServer()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var seenAuth atomic.Bool
	var forget atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		seenAuth.Store(true)
		if forget.Load() && r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the set is closed (cleanups run last first)

	cfg, err := ParseConfig([]byte(`{"mcpServers":{"remote":{"type":"http","url":"`+ts.URL+`","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`),
		func(k string) (string, bool) { return map[string]string{"TOKEN": "s3cret"}[k], k == "TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	set, tools := openTest(t, nil, cfg.Servers...)
	if !seenAuth.Load() || len(tools) != testServerTools {
		t.Fatalf("auth seen %v, %d tools", seenAuth.Load(), len(tools))
	}
	if res := call(t, tools, "echo", `{"text":"over http"}`); res.FullText() != "over http" {
		t.Fatalf("%+v", res)
	}
	mark := filepath.Join(t.TempDir(), "running")
	go func() {
		awaitFile(t, mark)
		ts.CloseClientConnections()
	}()
	// A dropped connection loses the call, not the session. The sleep is
	// short on purpose: under four CPU burners a 30-minute one stalled
	// here until the call timeout (the drop did not end the call), so a
	// regression fails in seconds instead of holding the suite.
	res := call(t, tools, "sleep", sleepArgs(5000, mark))
	if !res.IsError || !strings.Contains(res.FullText(), "lost in transport") {
		t.Fatalf("dropped connection: %+v", res.FullText())
	}
	if res := call(t, tools, "echo", `{"text":"still connected"}`); res.FullText() != "still connected" {
		t.Fatalf("after the drop: %+v", res)
	}
	if n := set.serverNamed("remote").Restarts(); n != 0 {
		t.Errorf("restarts %d", n)
	}
	// A server that forgot the session (it restarted) answers 404: the
	// session is replaced on the next call.
	forget.Store(true)
	res = call(t, tools, "echo", `{"text":"lost"}`)
	if !res.IsError || !strings.Contains(res.FullText(), "stopped during the call") {
		t.Fatalf("forgotten session: %+v", res.FullText())
	}
	forget.Store(false)
	if res := call(t, tools, "echo", `{"text":"new session"}`); res.FullText() != "new session" {
		t.Fatalf("after the new session: %+v", res)
	}
	if n := set.serverNamed("remote").Restarts(); n != 1 {
		t.Errorf("restarts %d", n)
	}
}

// TestInProcessTransport uses ServerConfig.Transport (an in-memory server).
func TestInProcessTransport(t *testing.T) {
	srv := newTestServer()
	sc := ServerConfig{Name: "mem", Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	_, tools := openTest(t, nil, sc)
	if res := call(t, tools, "echo", `{"text":"in memory"}`); res.FullText() != "in memory" {
		t.Fatalf("%+v", res)
	}
}

// A JSON response over the limit is refused and the session replaced; the
// next call works.
func TestStreamableHTTPJSONResponseLimit(t *testing.T) {
	srv := newTestServer()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	set, tools := openTest(t, &Options{MaxMessageBytes: 1 << 20}, ServerConfig{Name: "remote", Type: typeHTTP, URL: ts.URL})
	if res := call(t, tools, "big", `{"bytes":900000}`); res.IsError || len(res.FullText()) != 900000 {
		t.Fatalf("just under the limit: %.200s", res.FullText())
	}
	res := call(t, tools, "big", `{"bytes":2000000}`)
	if !res.IsError || !strings.Contains(res.FullText(), "larger than the 1048576-byte limit") {
		t.Fatalf("%.300s", res.FullText())
	}
	if res := call(t, tools, "echo", `{"text":"after"}`); res.FullText() != "after" {
		t.Fatalf("after the refused response: %+v", res)
	}
	if n := set.serverNamed("remote").Restarts(); n != 1 {
		t.Errorf("restarts %d", n)
	}
}

func TestOpenRefusesDuplicateNames(t *testing.T) {
	a := stdioServer(t, "same")
	set, err := Open(context.Background(), &Config{Servers: []ServerConfig{a, a}}, nil)
	defer set.Close()
	if err == nil || !strings.Contains(err.Error(), `two servers are named "same"`) || len(set.serverList()) != 0 {
		t.Fatalf("%v, %d servers", err, len(set.serverList()))
	}
}

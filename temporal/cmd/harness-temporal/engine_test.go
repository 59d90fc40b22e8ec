package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/mcptest"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/sqlite"
)

// workerFixture is a workspace holding a file whose every line matches
// "needle" (grep's 1000 matches: about 200 KB, far above the 24 KiB
// ceiling), a store and a one-step script for --model.
func workerFixture(t *testing.T) (root, script string, st store.DB) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 1500 {
		b.WriteString(strings.Repeat("y", 190) + " needle " + string(rune('a'+i%26)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"steps":[{"text":"done"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "harness.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return root, script, st
}

// parseEngineFlags parses args as the worker's engine flags.
func parseEngineFlags(t *testing.T, args ...string) *engineFlags {
	t.Helper()
	var f engineFlags
	fs := newFlags("worker", io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

// workerEngineOf builds the worker's engine on the fixture's workspace,
// script and store with the engine flags args.
func workerEngineOf(t *testing.T, root, script string, st store.DB, args ...string) (*workerEngine, error) {
	t.Helper()
	f := parseEngineFlags(t, append([]string{"--model", "scripted:" + script, "--workspace", root}, args...)...)
	return buildEngine(context.Background(), f, st, io.Discard)
}

// grepBig runs one grep call of big.txt through eng as a worker's Tool
// activity does (Engine.Call under Engine.CallInfo).
func grepBig(t *testing.T, eng *harness.Engine) *harness.ToolResult {
	t.Helper()
	ctx := context.Background()
	conv := harness.NewConversation("")
	turn, err := eng.BeginTurn(ctx, conv, "find the needles")
	if err != nil {
		t.Fatal(err)
	}
	call := harness.ToolCall{ID: "call_1", Name: "grep", Args: json.RawMessage(`{"pattern":"needle","path":"big.txt","max_matches":1000}`)}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{call}}}
	view, err := eng.View(ctx, conv, turn, eng.Tools(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	return eng.Call(ctx, eng.CallInfo(conv, turn, round, view), call)
}

func toolNames(eng *harness.Engine) []string {
	var names []string
	for _, s := range eng.Tools() {
		names = append(names, s.Name)
	}
	return names
}

func modelBytes(res *harness.ToolResult) int {
	n := 0
	for _, p := range res.ModelParts() {
		n += p.Size()
	}
	return n
}

// TestBuildEngine checks that the worker's engine is the default stack as
// harness run builds it, and that its switches turn parts off: the recall
// tool is offered, a big result is cut to the ceiling's preview with the
// rest spilled under the workspace's .harness/, and the full payload is
// kept for the store.
func TestBuildEngine(t *testing.T) {
	for _, c := range []struct {
		name       string
		args       []string
		recall     bool
		cut, spill bool
	}{
		{"default stack", nil, true, true, true},
		{"no spill", []string{"--no-spill"}, true, true, false},
		{"no ceiling", []string{"--max-bytes", "0"}, true, false, false},
		{"no compaction, no recall", []string{"--no-compact"}, false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, script, st := workerFixture(t)
			we, err := workerEngineOf(t, root, script, st, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer we.close()
			if got := slices.Contains(toolNames(we.engine), "recall"); got != c.recall {
				t.Errorf("recall offered = %v, want %v (tools %v)", got, c.recall, toolNames(we.engine))
			}
			res := grepBig(t, we.engine)
			if res.IsError {
				t.Fatalf("grep failed: %s", harness.Message{Parts: res.Parts}.Text())
			}
			if res.Bytes <= 4*guard.DefaultMaxBytes || res.PayloadSize() != res.Bytes {
				t.Fatalf("result has %d bytes (payload %d), want the whole grep output, far above the ceiling", res.Bytes, res.PayloadSize())
			}
			if cut := modelBytes(res) <= guard.DefaultMaxBytes; cut != c.cut || (len(res.Cuts) > 0) != c.cut {
				t.Errorf("model copy %d of %d bytes, cut %v (cuts %+v), want cut %v", modelBytes(res), res.Bytes, len(res.Cuts) > 0, res.Cuts, c.cut)
			}
			spilled, _ := filepath.Glob(filepath.Join(root, ".harness", "spill", "*"))
			if (len(spilled) > 0) != c.spill {
				t.Errorf("spill files %v, want some: %v", spilled, c.spill)
			}
		})
	}
}

// TestBuildEngineRefuses checks that bad flags are usage errors, refused
// before the worker opens anything.
func TestBuildEngineRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"negative ceiling", []string{"--model", "scripted:x", "--max-bytes", "-1"}},
		{"negative turn budget", []string{"--model", "scripted:x", "--turn-budget", "-5"}},
		{"unknown mode", []string{"--model", "scripted:x", "--mode", "sometimes"}},
		{"no model", nil},
		{"unknown provider", []string{"--model", "llama:7b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := parseEngineFlags(t, c.args...).check(); !errors.Is(err, errUsage) {
				t.Fatalf("check = %v, want a usage error", err)
			}
		})
	}
	t.Run("the worker refuses before it opens the store", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "harness.db")
		err := run(context.Background(), []string{"worker", "--db", db, "--model", "llama:7b"}, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Fatalf("worker = %v, want a usage error", err)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the store was created: %v", err)
		}
	})
}

// TestBuildEngineShell: --shell offers the shell tool as harness run's
// --shell does, where the mode offers it; a mode that asks refuses its
// calls without --yes, since a worker has nobody to ask.
func TestBuildEngineShell(t *testing.T) {
	for _, c := range []struct {
		name         string
		args         []string
		offered, ran bool
	}{
		{"no --shell", []string{"--mode", "auto"}, false, false},
		{"auto", []string{"--shell", "--mode", "auto"}, true, true},
		{"ask, nobody to ask", []string{"--shell", "--mode", "ask"}, true, false},
		{"ask with --yes", []string{"--shell", "--mode", "ask", "--yes"}, true, true},
		{"read-only", []string{"--shell", "--mode", "read-only"}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, script, st := workerFixture(t)
			we, err := workerEngineOf(t, root, script, st, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer we.close()
			if got := slices.Contains(toolNames(we.engine), "shell"); got != c.offered {
				t.Fatalf("shell offered = %v, want %v (tools %v)", got, c.offered, toolNames(we.engine))
			}
			if !c.offered {
				return
			}
			res := callShell(t, we.engine, "touch made && echo hello")
			_, statErr := os.Stat(filepath.Join(root, "made"))
			if ran := statErr == nil; ran != c.ran {
				t.Errorf("the command ran = %v, want %v (result %q)", ran, c.ran, harness.Message{Parts: res.Parts}.Text())
			}
			if c.ran && !strings.Contains(harness.Message{Parts: res.Parts}.Text(), "hello") {
				t.Errorf("result %q lacks the command's output", harness.Message{Parts: res.Parts}.Text())
			}
			if !c.ran && !res.IsError {
				t.Errorf("a refused call is not an error result: %q", harness.Message{Parts: res.Parts}.Text())
			}
		})
	}
}

// callShell runs one shell call through the engine as a turn's round does.
func callShell(t *testing.T, eng *harness.Engine, command string) *harness.ToolResult {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	return callTool(t, eng, "shell", args)
}

// callTool runs one call of tool name through the engine as a turn's
// round does.
func callTool(t *testing.T, eng *harness.Engine, name string, args json.RawMessage) *harness.ToolResult {
	t.Helper()
	ctx := context.Background()
	conv := harness.NewConversation("")
	turn, err := eng.BeginTurn(ctx, conv, "run it")
	if err != nil {
		t.Fatal(err)
	}
	call := harness.ToolCall{ID: "call_1", Name: name, Args: args}
	round := &harness.Round{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{call}}}
	view, err := eng.View(ctx, conv, turn, eng.Tools(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	return eng.Call(ctx, eng.CallInfo(conv, turn, round, view), call)
}

// TestBuildEngineMCP: the worker offers the tools of the MCP servers in
// WORKSPACE/.mcp.json or --mcp-config, as harness run does, and calls
// them; --no-mcp leaves the servers alone, read-only mode offers only
// their read-only tools, and a server that cannot start is an error that
// names it and says how to go on. The server is the real reference server.
func TestBuildEngineMCP(t *testing.T) {
	entry, _ := json.Marshal(mcptest.Server(t, "server-everything"))
	config := `{"mcpServers": {"everything": {"command": "node", "args": [` + string(entry) + `, "stdio"]}}}`
	t.Run("workspace config", func(t *testing.T) {
		root, script, st := workerFixture(t)
		if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		we, err := workerEngineOf(t, root, script, st, "--mode", "auto")
		if err != nil {
			t.Fatal(err)
		}
		defer we.close()
		names := toolNames(we.engine)
		if !slices.Contains(names, "get-sum") || !slices.Contains(names, "grep") {
			t.Fatalf("tools %v lack get-sum or grep", names)
		}
		res := callTool(t, we.engine, "get-sum", json.RawMessage(`{"a":2,"b":40}`))
		if res.IsError || !strings.Contains(harness.Message{Parts: res.Parts}.Text(), "42") {
			t.Errorf("get-sum = %q (error %v), want 42", harness.Message{Parts: res.Parts}.Text(), res.IsError)
		}
		autoCount := len(names)

		ro, err := workerEngineOf(t, root, script, st, "--mode", "read-only")
		if err != nil {
			t.Fatal(err)
		}
		defer ro.close()
		for _, s := range ro.engine.Tools() {
			if !s.Risk.IsReadOnly() {
				t.Errorf("read-only mode offers %s (%v)", s.Name, s.Risk)
			}
		}
		if n := len(ro.engine.Tools()); !slices.Contains(toolNames(ro.engine), "get-sum") || n >= autoCount {
			t.Errorf("read-only mode offers %d tools %v, want get-sum and fewer than auto's %d", n, toolNames(ro.engine), autoCount)
		}

		off, err := workerEngineOf(t, root, script, st, "--no-mcp")
		if err != nil {
			t.Fatal(err)
		}
		defer off.close()
		if slices.Contains(toolNames(off.engine), "get-sum") {
			t.Errorf("--no-mcp offers get-sum: %v", toolNames(off.engine))
		}
	})
	t.Run("--mcp-config", func(t *testing.T) {
		root, script, st := workerFixture(t)
		path := filepath.Join(t.TempDir(), "servers.json")
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		we, err := workerEngineOf(t, root, script, st, "--mcp-config", path)
		if err != nil {
			t.Fatal(err)
		}
		defer we.close()
		if !slices.Contains(toolNames(we.engine), "get-sum") {
			t.Errorf("tools %v lack get-sum", toolNames(we.engine))
		}
	})
	t.Run("a server that cannot start", func(t *testing.T) {
		root, script, st := workerFixture(t)
		if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {"broken": {"command": "sh", "args": ["-c", "echo no database >&2; exit 1"]}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		we, err := workerEngineOf(t, root, script, st)
		if err == nil {
			we.close()
			t.Fatal("buildEngine succeeded with a server that exits")
		}
		for _, want := range []string{`"broken" failed to start`, "no database", "--no-mcp"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
	})
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/mcptest"
)

// everythingServer returns the entry point of the pinned MCP reference
// server, skipping when it is not installed (failing under CI=true).
func everythingServer(t *testing.T) string { return mcptest.Server(t, "server-everything") }

// mcpWorkspace returns a workspace whose .mcp.json holds config.
func mcpWorkspace(t *testing.T, config string) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws
}

func everythingConfig(t *testing.T) string {
	entry, _ := json.Marshal(everythingServer(t))
	return `{"mcpServers": {"everything": {"command": "node", "args": [` + string(entry) + `, "stdio"]}}}`
}

func TestToolsListsWorkspaceAndMCPTools(t *testing.T) {
	ws := mcpWorkspace(t, everythingConfig(t))
	out, errOut, code := inproc(t, "tools", "--workspace", ws)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"NAME", "read_file", "builtin", "get-sum", "mcp", "read-only", "trigger-long-running-operation", "schema bytes per request"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, errOut, code = inproc(t, "tools", "--workspace", ws, "--json", "--select", "add two numbers")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Tools []struct {
			Name        string `json:"name"`
			Source      string `json:"source"`
			Risk        string `json:"risk"`
			SchemaBytes int    `json:"schema_bytes"`
			Offered     *bool  `json:"offered"`
		} `json:"tools"`
		Count       int  `json:"count"`
		SchemaBytes int  `json:"schema_bytes"`
		Offered     *int `json:"offered"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sum := 0
	for _, r := range got.Tools {
		sum += r.SchemaBytes
		if r.Name == "get-sum" && (r.Source != "mcp" || r.Risk != "read-only" || r.Offered == nil || !*r.Offered) {
			t.Errorf("get-sum row %+v", r)
		}
	}
	if got.Count != len(got.Tools) || got.SchemaBytes != sum || got.Offered == nil {
		t.Errorf("count %d/%d, bytes %d/%d, offered %v", got.Count, len(got.Tools), got.SchemaBytes, sum, got.Offered)
	}

	// --no-mcp leaves the servers alone.
	out, _, code = inproc(t, "tools", "--workspace", ws, "--no-mcp")
	if code != 0 || strings.Contains(out, "get-sum") {
		t.Errorf("--no-mcp: exit %d\n%s", code, out)
	}
}

func TestRunCallsAnMCPTool(t *testing.T) {
	ws := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfgPath, []byte(everythingConfig(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"steps":[
	  {"expect":{"tools_include":["get-sum","read_file"]},"tool_calls":[{"name":"get-sum","args":{"a":2,"b":40}}]},
	  {"expect":{"last_tool_contains":["42"]},"text":"The sum is 42."}]}`)
	out, errOut, code := inproc(t, "run", "--workspace", ws, "--no-store", "--mcp-config", cfgPath, "--model", "scripted:"+script, "add 2 and 40")
	if code != 0 || !strings.Contains(out, "The sum is 42.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestMCPServerThatFailsToStart(t *testing.T) {
	ws := mcpWorkspace(t, `{"mcpServers": {"broken": {"command": "sh", "args": ["-c", "echo cannot connect to database at db:5432 >&2; exit 1"]}}}`)
	_, errOut, code := inproc(t, "tools", "--workspace", ws)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{`"broken" failed to start`, "cannot connect to database at db:5432", "--no-mcp"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, _, code := inproc(t, "tools", "--workspace", ws, "--no-mcp"); code != 0 {
		t.Errorf("--no-mcp: exit %d", code)
	}
	_, errOut, code = inproc(t, "tools", "--workspace", ws, "--mcp-config", filepath.Join(ws, "missing.json"))
	if code != 1 || !strings.Contains(errOut, "missing.json") {
		t.Errorf("missing config: exit %d: %s", code, errOut)
	}
}

// TestToolsDeferTools: with --defer-tools a turn over the selection's
// threshold is offered every tool: harness's own whole (pinned), the MCP
// tools the prompt ranks whole, the others as stubs, which cost fewer
// schema bytes; with --all-tools too it is a usage error.
func TestToolsDeferTools(t *testing.T) {
	// Two servers, so that the tools are more than the selection's
	// threshold (below it every tool is offered whole).
	entry, _ := json.Marshal(everythingServer(t))
	server := `{"command": "node", "args": [` + string(entry) + `, "stdio"]}`
	ws := mcpWorkspace(t, `{"mcpServers": {"everything": `+server+`, "again": `+server+`}}`)
	out, errOut, code := inproc(t, "tools", "--workspace", ws, "--json", "--select", "add two numbers", "--defer-tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Tools []struct {
			Name    string `json:"name"`
			Source  string `json:"source"`
			Offered *bool  `json:"offered"`
			Stub    bool   `json:"stub"`
		} `json:"tools"`
		Count        int `json:"count"`
		SchemaBytes  int `json:"schema_bytes"`
		Offered      int `json:"offered"`
		OfferedBytes int `json:"offered_schema_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	stubs := 0
	for _, r := range got.Tools {
		if r.Offered == nil || !*r.Offered {
			t.Errorf("%s (%s) is not offered", r.Name, r.Source)
		}
		if r.Stub && r.Source != "mcp" {
			t.Errorf("%s, one of harness's own tools, is offered as a stub", r.Name)
		}
		if r.Name == "get-sum" && r.Stub {
			t.Errorf("get-sum, the prompt's tool, is offered as a stub")
		}
		if r.Stub {
			stubs++
		}
	}
	if got.Offered != got.Count || stubs == 0 || got.OfferedBytes >= got.SchemaBytes {
		t.Errorf("offered %d of %d tools, %d stubs, %d of %d schema bytes; want all, some stubs, fewer bytes", got.Offered, got.Count, stubs, got.OfferedBytes, got.SchemaBytes)
	}
	t.Logf("%d tools, %d as stubs: %d of %d schema bytes", got.Count, stubs, got.OfferedBytes, got.SchemaBytes)

	_, errOut, code = inproc(t, "tools", "--workspace", ws, "--select", "add two numbers", "--defer-tools", "--all-tools")
	if code != 2 || !strings.Contains(errOut, "choose one") {
		t.Errorf("--defer-tools --all-tools: exit %d, %q; want a usage error", code, errOut)
	}
}

// TestRunDeferToolsTeachesAStub: harness run --defer-tools offers every
// tool of two real MCP servers on every request, the ones the prompt does
// not need as stubs; a call from a stub whose arguments do not fit gets
// the tool's full schema back (its parameter's description, which the
// stub leaves out), and the corrected call runs.
func TestRunDeferToolsTeachesAStub(t *testing.T) {
	entry, _ := json.Marshal(everythingServer(t))
	server := `{"command": "node", "args": [` + string(entry) + `, "stdio"]}`
	cfgPath := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(cfgPath, []byte(`{"mcpServers": {"everything": `+server+`, "again": `+server+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, `{"steps":[
	  {"expect":{"tools":35,"tools_include":["read_file","again__echo","everything__get-sum"],"not_contains":["Message to echo"]},
	   "tool_calls":[{"name":"again__echo","args":{}}]},
	  {"expect":{"tools":35,"last_tool_contains":["again__echo","Message to echo"]},
	   "tool_calls":[{"name":"again__echo","args":{"message":"forty-two"}}]},
	  {"expect":{"tools":35,"last_tool_contains":["forty-two"]},"text":"Echoed."}]}`)
	out, errOut, code := inproc(t, "run", "--workspace", t.TempDir(), "--no-store", "--mcp-config", cfgPath, "--defer-tools",
		"--model", "scripted:"+script, "add two numbers")
	if code != 0 || !strings.Contains(out, "Echoed.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

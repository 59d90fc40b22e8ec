package mcptool

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseConfig(t *testing.T) {
	env := envOf(map[string]string{"TOKEN": "abc", "HOME": "/home/u", "EMPTY": ""})
	data := []byte(`{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "server-filesystem", "${HOME}/work"], "env": {"DEBUG": "${LEVEL:-info}"}},
    "remote": {"type": "http", "url": "https://mcp.example/v1", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "plain-url": {"url": "http://localhost:9000/mcp"},
    "legacy": {"type": "sse", "url": "http://localhost:9001/sse", "timeout": "90s"},
    "typed": {"type": "stdio", "command": "srv", "risk": "read-only|network", "toolRisk": {"drop_table": "destructive"}, "timeout": 2.5, "cwd": "/tmp"},
    "off": {"command": "x", "disabled": true, "autoApprove": ["ignored by harness"]}
  },
  "otherClientSetting": true
}`)
	cfg, err := ParseConfig(data, env)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"fs", "remote", "plain-url", "legacy", "typed", "off"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %v, want %v (file order)", names, want)
	}
	fs := cfg.Servers[0]
	if fs.Type != typeStdio || fs.Command != "npx" || fs.Args[2] != "/home/u/work" || fs.Env["DEBUG"] != "info" {
		t.Errorf("fs %+v", fs)
	}
	if r := cfg.Servers[1]; r.Type != typeHTTP || r.Headers["Authorization"] != "Bearer abc" {
		t.Errorf("remote %+v", r)
	}
	if r := cfg.Servers[2]; r.Type != typeHTTP {
		t.Errorf("url alone means streamable HTTP: %+v", r)
	}
	if r := cfg.Servers[3]; r.Type != typeSSE || r.Timeout != 90*time.Second {
		t.Errorf("legacy %+v", r)
	}
	typed := cfg.Servers[4]
	if typed.Risk != harness.ReadOnly|harness.Network || typed.ToolRisk["drop_table"] != harness.Destructive ||
		typed.Timeout != 2500*time.Millisecond || typed.Dir != "/tmp" {
		t.Errorf("typed %+v", typed)
	}
	if !cfg.Servers[5].Disabled {
		t.Error("disabled lost")
	}
}

func TestParseConfigErrors(t *testing.T) {
	env := envOf(map[string]string{})
	for _, tc := range []struct{ name, json, want string }{
		{"not json", `{"mcpServers": {`, "not a JSON object"},
		{"line and column", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", "line 3"},
		{"no servers", `{"servers": {}}`, `no "mcpServers"`},
		{"servers not object", `{"mcpServers": []}`, "must be an object"},
		{"missing var", `{"mcpServers": {"gh": {"command": "gh", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}`, `server "gh": env GITHUB_TOKEN: environment variable GITHUB_TOKEN is not set`},
		{"missing header var", `{"mcpServers": {"r": {"type": "http", "url": "http://x", "headers": {"X-Key": "${KEY}"}}}}`, `server "r": header X-Key`},
		{"unclosed", `{"mcpServers": {"a": {"command": "${HOME"}}}`, "unclosed"},
		{"bad var name", `{"mcpServers": {"a": {"command": "${1X}"}}}`, "not a variable name"},
		{"no command", `{"mcpServers": {"a": {"args": ["x"]}}}`, `needs "command"`},
		{"no url", `{"mcpServers": {"a": {"type": "http"}}}`, `needs "url"`},
		{"unknown type", `{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}`, `unknown "type"`},
		{"bad risk", `{"mcpServers": {"a": {"command": "x", "risk": "safe"}}}`, `unknown risk "safe"`},
		{"bad tool risk", `{"mcpServers": {"a": {"command": "x", "toolRisk": {"t": ""}}}}`, `"toolRisk" "t"`},
		{"bad timeout", `{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, "not a duration"},
		{"negative timeout", `{"mcpServers": {"a": {"command": "x", "timeout": -1}}}`, "negative"},
		{"duplicate", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, "listed twice"},
		{"wrong field type", `{"mcpServers": {"a": {"command": 3}}}`, `server "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.json), env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestExpansion(t *testing.T) {
	env := envOf(map[string]string{"A": "1", "EMPTY": ""})
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${A}", "1"},
		{"x${A}y${A}z", "x1y1z"},
		{"${B:-dflt}", "dflt"},
		{"${EMPTY:-dflt}", "dflt"},
		{"${EMPTY}", ""},
		{"${A:-dflt}", "1"},
		{"pa$$word $A", "pa$$word $A"},
		{"${B:-}", ""},
	} {
		cfg, err := ParseConfig([]byte(`{"mcpServers":{"s":{"command":"c","args":[`+quote(tc.in)+`]}}}`), env)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := cfg.Servers[0].Args[0]; got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"a":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil || len(cfg.Servers) != 1 {
		t.Fatalf("%v %+v", err, cfg)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file: no error")
	}
	os.WriteFile(path, []byte(`{`), 0o600)
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error does not name the file: %v", err)
	}
}

func TestParseRisk(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want harness.Risk
	}{
		{"read-only", harness.ReadOnly},
		{"readonly|network", harness.ReadOnly | harness.Network},
		{"idempotent, destructive", harness.Idempotent | harness.Destructive},
		{"Destructive+Network", harness.Destructive | harness.Network},
		{(harness.ReadOnly | harness.Network).String(), harness.ReadOnly | harness.Network},
	} {
		got, err := parseRisk(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q → %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "|", "safe", "read"} {
		if _, err := parseRisk(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParseConfig: any input gives a config or an error, never a panic,
// and a parsed config always has what its type needs.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"x","args":["${A:-1}"],"env":{"K":"${B:-}"}}}}`,
		`{"mcpServers":{"r":{"type":"http","url":"http://x","headers":{"A":"${A}"},"timeout":"1s"}}}`,
		`{"mcpServers":{"s":{"type":"sse","url":"u","risk":"read-only","toolRisk":{"t":"network"}}}}`,
		`{"mcpServers":{}}`, `{}`, `[]`, `{"mcpServers":{"a":{"command":"${"}}}`,
	} {
		f.Add([]byte(s))
	}
	env := envOf(map[string]string{"A": "a"})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, env)
		if err != nil {
			return
		}
		for _, s := range cfg.Servers {
			switch s.Type {
			case typeStdio:
				if s.Command == "" {
					t.Fatalf("stdio server %q without command", s.Name)
				}
			case typeHTTP, typeSSE:
				if s.URL == "" {
					t.Fatalf("%s server %q without url", s.Type, s.Name)
				}
			default:
				t.Fatalf("server %q has type %q", s.Name, s.Type)
			}
		}
	})
}

package mcpflags

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/mcptest"
	"github.com/agentharness/harness/mcptool"
	"github.com/agentharness/harness/toolselect"
)

func parse(t *testing.T, args ...string) *Flags {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

// TestConfigPath: --no-mcp wins, --mcp-config names the file, else the
// workspace's .mcp.json when it exists, else none.
func TestConfigPath(t *testing.T) {
	withConfig, without := t.TempDir(), t.TempDir()
	own := filepath.Join(withConfig, ConfigFile)
	if err := os.WriteFile(own, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		root string
		want string
	}{
		{"workspace config", nil, withConfig, own},
		{"no config", nil, without, ""},
		{"--mcp-config", []string{"--mcp-config", "/elsewhere.json"}, withConfig, "/elsewhere.json"},
		{"--no-mcp", []string{"--no-mcp", "--mcp-config", "/elsewhere.json"}, withConfig, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse(t, c.args...).ConfigPath(c.root)
			if err != nil || got != c.want {
				t.Errorf("ConfigPath = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestOpenWithoutServers: no config starts nothing and offers nothing; a
// config that does not parse is an error naming the file.
func TestOpenWithoutServers(t *testing.T) {
	ctx := context.Background()
	tools, stop, err := parse(t).Open(ctx, io.Discard, Client{Name: "test"}, t.TempDir(), nil, false, 0)
	if err != nil || len(tools) != 0 {
		t.Fatalf("Open = %v, %v", tools, err)
	}
	stop()

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"mcpServers": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := parse(t, "--mcp-config", bad).Open(ctx, io.Discard, Client{Name: "test"}, t.TempDir(), nil, false, 0); err == nil {
		t.Fatal("Open of a malformed config succeeded")
	} else if !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("error %q does not name the file", err)
	}
}

// TestSelector: a selector pinning the run's own tools (names taken
// literally) by default, none with --all-tools, a deferring one with the
// same pins with --defer-tools, and an error for both.
func TestSelector(t *testing.T) {
	builtin := []harness.Tool{{Spec: harness.ToolSpec{Name: "read_file"}}, {Spec: harness.ToolSpec{Name: "odd[name]*"}}}
	tests := []struct {
		args    []string
		want    *toolselect.Selector // nil: no selector
		wantErr string
	}{
		{nil, &toolselect.Selector{Pinned: []string{"read_file", `odd\[name]\*`}}, ""},
		{[]string{"--all-tools"}, nil, ""},
		{[]string{"--defer-tools"}, &toolselect.Selector{Defer: true, Pinned: []string{"read_file", `odd\[name]\*`}}, ""},
		{[]string{"--defer-tools", "--all-tools"}, nil, "choose one"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			sel, err := parse(t, tt.args...).Selector(builtin)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if sel != nil {
					t.Fatalf("selector %T, want none", sel)
				}
				return
			}
			got, ok := sel.(*toolselect.Selector)
			if !ok || got.Defer != tt.want.Defer || !slices.Equal(got.Pinned, tt.want.Pinned) {
				t.Fatalf("selector %+v, want %+v", sel, tt.want)
			}
		})
	}
}

// TestCallTimeoutFollowsTheToolTimeout: an MCP call times out at 90% of
// a tool timeout shorter than mcptool's default, so it ends (and the
// server's health is checked) before the run gives up on it; a longer or
// no tool timeout keeps the default.
func TestCallTimeoutFollowsTheToolTimeout(t *testing.T) {
	for _, tc := range []struct{ tool, want time.Duration }{
		{0, mcptool.DefaultCallTimeout},
		{4 * time.Second, 3600 * time.Millisecond},
		{mcptool.DefaultCallTimeout, mcptool.DefaultCallTimeout * 9 / 10},
		{harness.DefaultToolTimeout, mcptool.DefaultCallTimeout},
	} {
		if got := callTimeoutUnder(tc.tool); got != tc.want {
			t.Errorf("callTimeoutUnder(%s) = %s, want %s", tc.tool, got, tc.want)
		}
	}
}

// TestOpenPassesTheToolTimeout: through Open, a call to the reference
// server that outlasts a 2 s tool timeout is cancelled by the MCP layer at
// 1.8 s (before, it ran to mcptool's 60 s default whatever the run's
// limit). The operation lasts far longer than any bound here, so nothing
// depends on speed.
func TestOpenPassesTheToolTimeout(t *testing.T) {
	entry, _ := json.Marshal(mcptest.Server(t, "server-everything"))
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": "node", "args": [`+string(entry)+`, "stdio"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, stop, err := parse(t, "--mcp-config", cfg).Open(ctx, io.Discard, Client{Name: "test"}, t.TempDir(), nil, false, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	i := slices.IndexFunc(tools, func(tl harness.Tool) bool { return strings.HasSuffix(tl.Spec.Name, "trigger-long-running-operation") })
	if i < 0 {
		t.Fatal("no long-running tool")
	}
	res, err := tools[i].Func(ctx, &harness.ToolCall{ID: "c1", Name: tools[i].Spec.Name, Args: json.RawMessage(`{"duration": 3600, "steps": 1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !strings.Contains(res.FullText(), "within 1.8s") {
		t.Fatalf("result: %s", res.FullText())
	}
}

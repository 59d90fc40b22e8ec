package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mcptool"
	"github.com/agentharness/harness/tools/workspace"
	"github.com/agentharness/harness/toolselect"
)

// mcpConfigFile is the config looked for in the workspace when
// --mcp-config is not given.
const mcpConfigFile = ".mcp.json"

// mcpFlags are the flags that add the tools of MCP servers and choose the
// tools offered in each turn.
type mcpFlags struct {
	config   string
	noMCP    bool
	allTools bool
}

func (f *mcpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "mcp-config", "", "MCP servers whose tools are offered, in the .mcp.json format "+
		`({"mcpServers": {...}}); default WORKSPACE/.mcp.json when it exists`)
	fs.BoolVar(&f.noMCP, "no-mcp", false, "start no MCP server, even when WORKSPACE/.mcp.json exists")
	fs.BoolVar(&f.allTools, "all-tools", false, fmt.Sprintf("offer every tool in every turn; by default a turn with more than %d tools "+
		"offers the %d most relevant to its prompt, plus identity tools and the tools called recently", toolselect.DefaultThreshold, toolselect.DefaultTopK))
}

// configPath returns the MCP config to load, or "" when there is none.
func (f *mcpFlags) configPath(root string) (string, error) {
	switch {
	case f.noMCP:
		return "", nil
	case f.config != "":
		return f.config, nil
	}
	p := filepath.Join(root, mcpConfigFile)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("MCP config: %w", err)
	}
	return p, nil
}

// open starts the configured MCP servers and returns their tools, named so
// that none collides with the tools already offered (those are namespaced
// "server__tool"). In read-only mode only the read-only MCP tools are
// offered. The returned function stops the servers. A server that fails
// to start is an error naming it, with the tail of its stderr.
func (f *mcpFlags) open(ctx context.Context, e *env, root string, taken []harness.Tool, readOnly bool) ([]harness.Tool, func(), error) {
	nothing := func() {}
	path, err := f.configPath(root)
	if err != nil || path == "" {
		return nil, nothing, err
	}
	cfg, err := mcptool.LoadConfig(path)
	if err != nil {
		return nil, nothing, err
	}
	var reserved []string
	for _, t := range taken {
		reserved = append(reserved, t.Spec.Name)
	}
	set, err := mcptool.Open(ctx, cfg, &mcptool.Options{Reserved: reserved, ClientName: "harness", ClientVersion: version})
	stop := func() { set.Close() }
	if err != nil {
		stop()
		return nil, nothing, fmt.Errorf("%w\n(fix %s, or run with --no-mcp)", err, path)
	}
	tools, skipped, err := set.Tools(ctx)
	if err != nil {
		stop()
		return nil, nothing, err
	}
	for _, s := range skipped {
		fmt.Fprintf(e.stderr, "harness: %v\n", s)
	}
	if readOnly {
		kept := tools[:0]
		for _, t := range tools {
			if t.Spec.Risk.IsReadOnly() {
				kept = append(kept, t)
			}
		}
		tools = kept
	}
	return tools, stop, nil
}

// selector returns the per-turn tool selector, or nil with --all-tools.
func (f *mcpFlags) selector() harness.Selector {
	if f.allTools {
		return nil
	}
	return &toolselect.Selector{}
}

// readOnlyMode reports whether the tool flags ask for read-only mode.
func readOnlyMode(t *toolFlags) bool { return t.modeSet && t.mode == workspace.ModeReadOnly }

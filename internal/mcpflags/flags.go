// Package mcpflags defines, once, the switches that add the tools of MCP
// servers to a run and choose the tools each turn offers: harness run,
// harness tools and the Temporal worker (harness-temporal worker) read
// them, so that a durable turn offers what a turn of harness run offers.
package mcpflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mcptool"
	"github.com/agentharness/harness/toolselect"
)

// ConfigFile is the config looked for in the workspace when --mcp-config
// is not given.
const ConfigFile = ".mcp.json"

// Flags are the switches: --mcp-config, --no-mcp, --all-tools and
// --defer-tools.
type Flags struct {
	config     string
	noMCP      bool
	allTools   bool
	deferTools bool
}

// Register adds the switches to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "mcp-config", "", "MCP servers whose tools are offered, in the .mcp.json format "+
		`({"mcpServers": {...}}); default WORKSPACE/.mcp.json when it exists`)
	fs.BoolVar(&f.noMCP, "no-mcp", false, "start no MCP server, even when WORKSPACE/.mcp.json exists")
	fs.BoolVar(&f.allTools, "all-tools", false, fmt.Sprintf("offer every tool in every turn; by default a turn with more than %d tools "+
		"offers harness's own tools and, of the MCP tools, the most relevant to its prompt (%d in all), plus identity tools and the tools called recently", toolselect.DefaultThreshold, toolselect.DefaultTopK))
	fs.BoolVar(&f.deferTools, "defer-tools", false, "offer every tool on every request: harness's own tools and the tools the conversation's first turn selects "+
		"whole, the other MCP tools as short stubs (name, first sentence, parameter names), so the tool list never changes and "+
		"the prompt cache holds across turns; a call from a stub whose arguments do not fit gets the full schema back")
}

// ConfigPath returns the MCP config to load for the workspace root, or ""
// when there is none (--no-mcp, or no WORKSPACE/.mcp.json).
func (f *Flags) ConfigPath(root string) (string, error) {
	switch {
	case f.noMCP:
		return "", nil
	case f.config != "":
		return f.config, nil
	}
	p := filepath.Join(root, ConfigFile)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("MCP config: %w", err)
	}
	return p, nil
}

// Client names the program to the MCP servers it starts.
type Client struct{ Name, Version string }

// Open starts the configured MCP servers and returns their tools, named so
// that none collides with the tools already offered (those are namespaced
// "server__tool"). With readOnly only the read-only MCP tools are offered.
// toolTimeout is the run's time limit of one tool call (0: none); a call to
// a server times out a little before it (see callTimeoutUnder), so the
// server's health is checked and a wedged one restarted. A tool a server
// lists but harness cannot offer is reported on warn. The returned function
// stops the servers. A server that fails to start is an error naming it,
// with the tail of its stderr.
func (f *Flags) Open(ctx context.Context, warn io.Writer, client Client, root string, taken []harness.Tool, readOnly bool, toolTimeout time.Duration) ([]harness.Tool, func(), error) {
	nothing := func() {}
	path, err := f.ConfigPath(root)
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
	set, err := mcptool.Open(ctx, cfg, &mcptool.Options{Reserved: reserved, ClientName: client.Name, ClientVersion: client.Version,
		CallTimeout: callTimeoutUnder(toolTimeout)})
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
		fmt.Fprintf(warn, "%s: %v\n", client.Name, s)
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

// callTimeoutUnder is the time limit of one MCP call for a run whose tool
// calls time out after toolTimeout (0: none): mcptool's default, or 90% of
// toolTimeout when that is not longer, so the MCP call times out first and
// the server's health is checked before the run gives up on the call. A
// server's own "timeout" in the config still wins.
func callTimeoutUnder(toolTimeout time.Duration) time.Duration {
	if toolTimeout > 0 && mcptool.DefaultCallTimeout >= toolTimeout {
		return toolTimeout * 9 / 10
	}
	return mcptool.DefaultCallTimeout
}

// Selector returns the per-turn tool selector: nil with --all-tools;
// else one that pins builtin, the tools harness offers itself (the
// workspace's, recall), so that only MCP tools are ever selected out (a
// run's own tools are the ones every session calls: a selection that left
// out the shell would cost a round whenever the model needs it); with
// --defer-tools it defers (toolselect.Selector.Defer), offering the MCP
// tools a turn does not select as stubs. The two switches together are an
// error.
func (f *Flags) Selector(builtin []harness.Tool) (harness.Selector, error) {
	switch {
	case f.allTools && f.deferTools:
		return nil, errors.New("--all-tools and --defer-tools: choose one (--all-tools offers every tool whole; --defer-tools offers the MCP tools a turn does not select as stubs)")
	case f.allTools:
		return nil, nil
	}
	pinned := make([]string, len(builtin))
	for i, t := range builtin {
		pinned[i] = toolselect.Literal(t.Spec.Name)
	}
	return &toolselect.Selector{Defer: f.deferTools, Pinned: pinned}, nil
}

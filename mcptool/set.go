package mcptool

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Set is the servers of one config, started together, and their tools.
type Set struct {
	opts    Options
	servers []*server
}

// Open starts every enabled server of cfg, in parallel, and lists their
// tools. When some fail, the returned error names each of them with the
// tail of its stderr, and the Set holds the servers that did start (the
// caller decides whether to go on without the others; Close it either
// way).
func Open(ctx context.Context, cfg *Config, opts *Options) (*Set, error) {
	set := &Set{opts: opts.withDefaults()}
	if cfg == nil {
		return set, nil
	}
	var enabled []ServerConfig
	seen := map[string]bool{}
	for _, sc := range cfg.Servers {
		if seen[sc.Name] {
			return set, fmt.Errorf("mcptool: two servers are named %q", sc.Name)
		}
		seen[sc.Name] = true
		if !sc.Disabled {
			enabled = append(enabled, sc)
		}
	}
	servers := make([]*server, len(enabled))
	errs := make([]error, len(enabled))
	var wg sync.WaitGroup
	for i, sc := range enabled {
		wg.Go(func() { servers[i], errs[i] = connect(ctx, sc, &set.opts) })
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			set.servers = append(set.servers, s)
		}
	}
	return set, errors.Join(errs...)
}

// serverList returns the servers in config order.
func (s *Set) serverList() []*server { return append([]*server(nil), s.servers...) }

// serverNamed returns the server of that name, or nil.
func (s *Set) serverNamed(name string) *server {
	for _, srv := range s.servers {
		if srv.cfg.Name == name {
			return srv
		}
	}
	return nil
}

// Close stops every server.
func (s *Set) Close() error {
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(func() { _ = srv.Close() })
	}
	wg.Wait()
	return nil
}

// Skipped is a tool left out of Tools, and why.
type Skipped struct {
	Server, Tool string
	Err          error
}

// Error says which tool was left out and why.
func (k Skipped) Error() string {
	return fmt.Sprintf("MCP server %q: tool %q left out: %v", k.Server, k.Tool, k.Err)
}

// Tools returns one harness tool per MCP tool, servers in config order and
// each server's tools in the order it lists them, so that the prompt
// prefix is stable. Servers whose list changed are listed again. Tools
// whose input schema does not compile are left out and reported in
// skipped; err is set when a server could not be listed.
func (s *Set) Tools(ctx context.Context) (tools []harness.Tool, skipped []Skipped, err error) {
	type entry struct {
		srv  *server
		tool *mcp.Tool
	}
	var (
		entries []entry
		keys    []toolKey
		errs    []error
	)
	for _, srv := range s.servers {
		ts, err := srv.ListTools(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range ts {
			entries = append(entries, entry{srv, t})
			keys = append(keys, toolKey{srv.cfg.Name, t.Name})
		}
	}
	names := assignNames(keys, s.opts.Reserved)
	for i, e := range entries {
		t, err := newTool(e.srv, e.tool, names[keys[i]])
		if err != nil {
			skipped = append(skipped, Skipped{Server: e.srv.cfg.Name, Tool: e.tool.Name, Err: err})
			continue
		}
		tools = append(tools, t)
	}
	return tools, skipped, errors.Join(errs...)
}

func newTool(srv *server, t *mcp.Tool, name string) (harness.Tool, error) {
	schema, err := inputSchema(t.InputSchema)
	if err != nil {
		return harness.Tool{}, err
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	mcpName := t.Name
	spec := harness.ToolSpec{Name: name, Description: desc, InputSchema: schema, Risk: toolRisk(srv.cfg, t)}
	fn := func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		res, err := srv.Call(ctx, mcpName, call.Args)
		if res != nil {
			setMeta(res, "mcp_server", srv.cfg.Name)
			if mcpName != name {
				setMeta(res, "mcp_tool", mcpName)
			}
		}
		return res, err
	}
	return harness.Tool{Spec: spec, Func: fn}, nil
}

func toolRisk(sc ServerConfig, t *mcp.Tool) harness.Risk {
	if r, ok := sc.ToolRisk[t.Name]; ok && r != 0 {
		return r
	}
	if sc.Risk != 0 {
		return sc.Risk
	}
	return riskFromAnnotations(t.Annotations)
}

package mcptool_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A .mcp.json file as users already write it; ${VAR} comes from the
// environment, and risk/toolRisk override what the annotations say.
func ExampleParseConfig() {
	data := []byte(`{"mcpServers": {
	  "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"],
	             "toolRisk": {"write_file": "destructive"}},
	  "issues": {"type": "http", "url": "https://mcp.example.com/mcp",
	             "headers": {"Authorization": "Bearer ${ISSUES_TOKEN}"}, "timeout": "30s"}
	}}`)
	env := map[string]string{"HOME": "/home/ada", "ISSUES_TOKEN": "t0ken"}
	cfg, err := mcptool.ParseConfig(data, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		fmt.Println(s.Name, s.Type, s.Command, strings.Join(s.Args, " "), s.URL, s.Headers["Authorization"], s.Timeout)
	}
	// Output:
	// files stdio npx -y @modelcontextprotocol/server-filesystem /home/ada/notes   0s
	// issues http   https://mcp.example.com/mcp Bearer t0ken 30s
}

// Open connects to the servers of a config and offers their tools as
// harness tools. Here the server runs in process; a config file's servers
// are started as processes or reached over HTTP the same way.
func ExampleOpen() {
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	closed := false
	server.AddTool(&mcp.Tool{
		Name:        "forecast",
		Description: "Forecast for a city.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny, 21 °C"}}}, nil
	})
	cfg := &mcptool.Config{Servers: []mcptool.ServerConfig{{
		Name: "weather",
		Transport: func(ctx context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			_, err := server.Connect(ctx, st, nil)
			return ct, err
		},
	}}}

	ctx := context.Background()
	set, err := mcptool.Open(ctx, cfg, nil)
	defer set.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, _, _ := set.Tools(ctx)
	for _, t := range tools {
		fmt.Println(t.Spec.Name, t.Spec.Risk)
	}
	res, _ := tools[0].Func(ctx, &harness.ToolCall{Name: "forecast", Args: []byte(`{"city":"Lisbon"}`)})
	fmt.Println(res.FullText())
	// Output:
	// forecast read-only
	// sunny, 21 °C
}

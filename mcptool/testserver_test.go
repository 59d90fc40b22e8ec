package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a stdio MCP server written with the go-sdk:
// with MCPTOOL_TEST_SERVER set, TestMain serves instead of testing, so the
// tests exercise a real process, real pipes and real crashes.
const serverEnv = "MCPTOOL_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runTestServer(mode))
	}
	os.Exit(m.Run())
}

func runTestServer(mode string) int {
	switch mode {
	case "fail-start":
		fmt.Fprintln(os.Stderr, "loading configuration from /etc/example")
		fmt.Fprintln(os.Stderr, "fatal: cannot open database /nonexistent/db.sqlite: permission denied")
		return 3
	case "serve":
	default:
		fmt.Fprintf(os.Stderr, "unknown test server mode %q\n", mode)
		return 2
	}
	s := newTestServer()
	if err := s.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// stdioServer returns the config of the test binary as a stdio server.
func stdioServer(t testing.TB, name string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{
		Name:    name,
		Type:    typeStdio,
		Command: exe,
		Args:    []string{"-test.run=^$"},
		// A race-enabled binary sleeps 1 s at exit unless told otherwise.
		Env: map[string]string{serverEnv: "serve", "GORACE": "atexit_sleep_ms=0"},
	}
}

// testPNG is a 1×1 PNG.
var testPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// testWAV is the 44-byte header of an empty WAV file plus 4 samples.
var testWAV = append([]byte("RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x08\x00\x00\x00"), 1, 2, 3, 4, 5, 6, 7, 8)

// wrappedText is what the "wrapped" tool returns as text and, wrapped in
// an object, as structured content (as the filesystem server does).
const wrappedText = "line one of a file\nline two of a file\nline three of a file\n"

// bigText returns n bytes of numbered lines: a cut shows where it cut.
func bigText(n int) string {
	b := make([]byte, 0, n+64)
	for i := 1; len(b) < n; i++ {
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " abcdefghijklmnopqrstuvwxyz\n"...)
	}
	return string(b[:n])
}

// awaitFile waits until path exists (a sleep call's mark), bounded by
// hangBound only.
func awaitFile(t testing.TB, path string) {
	t.Helper()
	for deadline := time.Now().Add(hangBound); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Errorf("%s never appeared", path)
}

// sleepArgs returns the arguments of a sleep call of ms milliseconds that
// marks mark when it starts.
func sleepArgs(ms int, mark string) string {
	b, _ := json.Marshal(map[string]any{"ms": ms, "mark": mark})
	return string(b)
}

func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptool-test", Version: "1"}, &mcp.ServerOptions{PageSize: 3})
	t := true
	f := false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	num := func(m map[string]any, k string, def int) int {
		if v, ok := m[k].(float64); ok {
			return int(v)
		}
		return def
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back.", Annotations: readOnly,
		InputSchema: obj(`"text":{"type":"string","description":"what to echo"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m := args(req)
			s, _ := m["text"].(string)
			return text(s), nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "Return a text of the given size in bytes.", Annotations: readOnly,
		InputSchema: obj(`"bytes":{"type":"integer"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(bigText(num(args(req), "bytes", 1000))), nil
		})
	s.AddTool(&mcp.Tool{Name: "blocks", Description: "Return many text blocks.", Annotations: readOnly,
		InputSchema: obj(`"count":{"type":"integer"},"size":{"type":"integer"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m := args(req)
			n, size := num(m, "count", 10), num(m, "size", 100)
			res := &mcp.CallToolResult{}
			for i := range n {
				res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("block %d ", i+1) + strings.Repeat("x", size)})
			}
			return res, nil
		})
	s.AddTool(&mcp.Tool{Name: "media", Description: "Return one content block of every kind.", Annotations: readOnly, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			size := int64(2048)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "every kind follows"},
				&mcp.ImageContent{MIMEType: "image/png", Data: testPNG},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: testWAV},
				&mcp.ResourceLink{URI: "file:///docs/report.pdf", Name: "report.pdf", MIMEType: "application/pdf", Size: &size, Description: "the quarterly report"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.md", MIMEType: "text/markdown", Text: "# Notes\nremember the milk"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF-1.7 binary")}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///pixel.png", MIMEType: "image/png", Blob: testPNG}},
			}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "structured", Description: "Return JSON as text and as structured content.", Annotations: readOnly, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v := map[string]any{"temperature": 21.5, "conditions": "sunny with a light breeze", "humidity": 40}
			b, _ := json.Marshal(v)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}, nil
		})
	s.AddTool(&mcp.Tool{Name: "wrapped", Description: "Return text and the same text wrapped as structured content.", Annotations: readOnly, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: wrappedText}},
				StructuredContent: map[string]any{"content": wrappedText, "lines": 3},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "only_structured", Description: "Return structured content alone.", Annotations: readOnly, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"id": 7, "name": "seven"}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Fail as a tool does.", Annotations: readOnly, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("no such record: 42")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "sleep", Description: "Sleep, then answer.", Annotations: readOnly,
		InputSchema: obj(`"ms":{"type":"integer"},"mark":{"type":"string"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// mark names a file created once the call is running, so a
			// test acts mid-call without guessing how long a start takes.
			if mark, _ := args(req)["mark"].(string); mark != "" {
				if err := os.WriteFile(mark, nil, 0o600); err != nil {
					return nil, err
				}
			}
			select {
			case <-time.After(time.Duration(num(args(req), "ms", 100)) * time.Millisecond):
				return text("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exit the server in the middle of the call.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &t}, InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: boom in the crash handler")
			os.Exit(2)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "add_tool", Description: "Add a tool (the server then announces list_changed).",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
		InputSchema: obj(`"name":{"type":"string"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, _ := args(req)["name"].(string)
			s.AddTool(&mcp.Tool{Name: name, Description: "added at run time", InputSchema: obj(``)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("hi from " + name), nil
				})
			return text("added " + name), nil
		})
	s.AddTool(&mcp.Tool{Name: "mutate", Description: "A tool without annotations.", InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("mutated"), nil
		})
	return s
}

// testServerTools is how many tools newTestServer starts with.
const testServerTools = 12

package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The transports a server can use.
const (
	typeStdio = "stdio"
	typeHTTP  = "http" // streamable HTTP
	typeSSE   = "sse"  // the older HTTP+SSE transport
)

// Config is a parsed .mcp.json file: the servers in the order the file
// lists them (the order fixes the order of the tools, which keeps the
// request prefix stable).
type Config struct {
	Servers []ServerConfig
}

// ServerConfig is one entry of "mcpServers". The fields a user's existing
// file has (command, args, env, type, url, headers) keep their meaning;
// risk, toolRisk, timeout, cwd and disabled are harness additions that other
// clients ignore.
type ServerConfig struct {
	// Name is the key of the entry in "mcpServers".
	Name string
	// Type is "stdio" (the default when Command is set), "http"
	// (streamable HTTP) or "sse" (the older HTTP+SSE transport).
	Type string
	// Command, Args, Env and Dir start a stdio server. Env is added to the
	// harness's own environment.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Headers reach an HTTP server.
	URL     string
	Headers map[string]string
	// Risk, when set, replaces the risk derived from annotations for every
	// tool of the server; ToolRisk does so for one tool (by its MCP name)
	// and wins over Risk.
	Risk     harness.Risk
	ToolRisk map[string]harness.Risk
	// Timeout bounds each call to this server; 0 means Options.CallTimeout.
	Timeout time.Duration
	// Disabled servers are skipped by Open.
	Disabled bool

	// Transport, when set, is used instead of Type: it returns a fresh MCP
	// transport for each (re)connection. It serves in-process servers and
	// tests; it cannot be written in a config file.
	Transport func(ctx context.Context) (mcp.Transport, error) `json:"-"`
}

// rawServer is the JSON form of a ServerConfig.
type rawServer struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Risk     string            `json:"risk"`
	ToolRisk map[string]string `json:"toolRisk"`
	Timeout  json.RawMessage   `json:"timeout"`
	Disabled bool              `json:"disabled"`
}

// LoadConfig reads and parses a .mcp.json file, expanding ${VAR} from the
// process environment.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcptool: reading MCP config: %w", err)
	}
	cfg, err := ParseConfig(data, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig parses the .mcp.json format. lookup resolves ${VAR} (nil
// means the process environment). Expansion applies to the command, args,
// env values, cwd, url and header values; a variable that is not set and
// has no ":-default" is an error naming the server and the field.
func ParseConfig(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("mcptool: MCP config is not a JSON object: %w", describeJSONError(data, err))
	}
	rawServers, ok := top["mcpServers"]
	if !ok {
		return nil, errors.New(`mcptool: MCP config has no "mcpServers" object`)
	}
	names, values, err := orderedObject(rawServers)
	if err != nil {
		return nil, fmt.Errorf(`mcptool: "mcpServers": %w`, err)
	}
	cfg := &Config{}
	for i, name := range names {
		sc, err := parseServer(name, values[i], lookup)
		if err != nil {
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	return cfg, nil
}

func parseServer(name string, raw json.RawMessage, lookup func(string) (string, bool)) (ServerConfig, error) {
	fail := func(format string, args ...any) (ServerConfig, error) {
		return ServerConfig{}, fmt.Errorf("mcptool: server %q: %s", name, fmt.Sprintf(format, args...))
	}
	if name == "" {
		return fail("a server needs a non-empty name")
	}
	var rs rawServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&rs); err != nil {
		return fail("%v", err)
	}
	sc := ServerConfig{Name: name, Disabled: rs.Disabled}
	if err := rs.expand(&sc, lookup); err != nil {
		return fail("%v", err)
	}
	if err := rs.transport(&sc); err != nil {
		return fail("%v", err)
	}
	if err := rs.risks(&sc); err != nil {
		return fail("%v", err)
	}
	var err error
	if sc.Timeout, err = parseTimeout(rs.Timeout); err != nil {
		return fail(`"timeout": %v`, err)
	}
	return sc, nil
}

// expand copies the fields that may name environment variables into sc,
// expanded through lookup; the error names the first field that failed.
func (rs *rawServer) expand(sc *ServerConfig, lookup func(string) (string, bool)) error {
	var err error
	exp := func(field, s string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = expandVars(s, lookup)
		if err != nil {
			err = fmt.Errorf("%s: %w", field, err)
		}
		return out
	}
	sc.Command = exp("command", rs.Command)
	for i, a := range rs.Args {
		sc.Args = append(sc.Args, exp(fmt.Sprintf("args[%d]", i), a))
	}
	if len(rs.Env) > 0 {
		sc.Env = map[string]string{}
		for k, v := range rs.Env {
			sc.Env[k] = exp("env "+k, v)
		}
	}
	sc.Dir = exp("cwd", rs.Cwd)
	sc.URL = exp("url", rs.URL)
	if len(rs.Headers) > 0 {
		sc.Headers = map[string]string{}
		for k, v := range rs.Headers {
			sc.Headers[k] = exp("header "+k, v)
		}
	}
	return err
}

// transport sets sc.Type from "type" (the spellings other clients use
// included) or, when it is missing, from whether a command or a URL is
// given, and checks that the transport has what it needs.
func (rs *rawServer) transport(sc *ServerConfig) error {
	switch t := strings.ToLower(rs.Type); t {
	case "", typeStdio:
		switch {
		case sc.Command != "":
			sc.Type = typeStdio
		case sc.URL != "" && t == "":
			sc.Type = typeHTTP // {"url": ...} alone means streamable HTTP
		default:
			return errors.New(`a stdio server needs "command"`)
		}
	case typeHTTP, "streamable-http", "streamablehttp", "streamable_http":
		sc.Type = typeHTTP
	case typeSSE:
		sc.Type = typeSSE
	default:
		return fmt.Errorf(`unknown "type" %q (use "stdio", "http" or "sse")`, rs.Type)
	}
	if sc.Type != typeStdio && sc.URL == "" {
		return fmt.Errorf(`a %s server needs "url"`, sc.Type)
	}
	return nil
}

// risks parses "risk" and "toolRisk" into sc.
func (rs *rawServer) risks(sc *ServerConfig) error {
	if rs.Risk != "" {
		var err error
		if sc.Risk, err = parseRisk(rs.Risk); err != nil {
			return fmt.Errorf(`"risk": %w`, err)
		}
	}
	for tool, r := range rs.ToolRisk {
		risk, err := parseRisk(r)
		if err != nil {
			return fmt.Errorf(`"toolRisk" %q: %w`, tool, err)
		}
		if sc.ToolRisk == nil {
			sc.ToolRisk = map[string]harness.Risk{}
		}
		sc.ToolRisk[tool] = risk
	}
	return nil
}

// parseTimeout accepts seconds as a number (30, 0.5) or a Go duration
// string ("30s", "2m").
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var d time.Duration
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration such as \"30s\"", s)
		}
	} else {
		secs, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return 0, fmt.Errorf("%s is neither seconds nor a duration string", raw)
		}
		if secs >= float64(math.MaxInt64)/float64(time.Second) {
			return 0, fmt.Errorf("%s seconds is longer than a timeout can be", raw)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("%s is negative", d)
	}
	return d, nil
}

// orderedObject returns the keys and values of a JSON object in document
// order. A duplicate key is an error: one of the two entries would silently
// be lost.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("must be an object of servers")
	}
	var (
		names  []string
		values []json.RawMessage
		seen   = map[string]bool{}
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("server %q: %w", name, err)
		}
		if seen[name] {
			return nil, nil, fmt.Errorf("server %q is listed twice", name)
		}
		seen[name] = true
		names = append(names, name)
		values = append(values, v)
	}
	return names, values, nil
}

// describeJSONError adds the line and column to a syntax error.
func describeJSONError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	off := min(int(se.Offset), len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return fmt.Errorf("line %d column %d: %w", line, col, err)
}

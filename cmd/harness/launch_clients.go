package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// launchClient is what a launcher (harness claude, codex, gemini,
// opencode) knows of one client: its binary, its provider, its read tool,
// where it keeps its own base URL and how to point it at the proxy.
type launchClient struct {
	// name is the subcommand and the binary looked up on PATH.
	name string
	// api is the provider family whose upstream the client's own base URL
	// setting replaces (proxy's anthropic, openai, gemini); "" when the
	// client may call any (opencode).
	api string
	// readTool is the tool the client's model reads a file with.
	readTool string
	// pkg is the npm package that installs the client.
	pkg string
	// upstream returns the client's own base URL setting, "" when unset.
	upstream func(getenv func(string) string) string
	// grant, when set, says the client cannot read a git-ignored file in
	// its project (Gemini CLI's read_file refuses what .gitignore or
	// .git/info/exclude names): its spill files then go to a folder of
	// harness's own outside the project, and grant returns the arguments
	// that let the client read that folder without asking.
	grant func(dir string) []string
	// point returns what points the client at base (the proxy's address
	// and route) for this process only: variables added to its
	// environment and arguments put before the user's.
	point func(base string, getenv func(string) string) (env, args []string)
	// bypass, when set, says why the client's settings send its model
	// calls around the proxy (launch_bypass.go), "" when they do not.
	bypass func(getenv func(string) string, cwd string) string
}

// launchClients are the clients harness launches.
func launchClients() []launchClient {
	return []launchClient{
		{name: "claude", api: "anthropic", readTool: "Read", pkg: "@anthropic-ai/claude-code", bypass: claudeBypass,
			upstream: func(getenv func(string) string) string { return getenv("ANTHROPIC_BASE_URL") },
			point: func(base string, _ func(string) string) ([]string, []string) {
				return []string{"ANTHROPIC_BASE_URL=" + base}, nil
			}},
		// Codex has no file-reading tool: its model reads with the shell.
		{name: "codex", api: "openai", readTool: "shell", pkg: "@openai/codex", bypass: codexBypass,
			upstream: codexBaseURL,
			point: func(base string, _ func(string) string) ([]string, []string) {
				return nil, []string{"-c", "openai_base_url=" + strconv.Quote(base+"/v1")}
			}},
		// Gemini CLI calls the Gemini API with an API key and Google's Code
		// Assist API signed in with Google: both are pointed at the proxy.
		{name: "gemini", readTool: "read_file", pkg: "@google/gemini-cli", bypass: geminiBypass,
			grant:    func(dir string) []string { return []string{"--include-directories", dir} },
			upstream: geminiUpstream,
			point: func(base string, _ func(string) string) ([]string, []string) {
				return []string{"GOOGLE_GEMINI_BASE_URL=" + base, "CODE_ASSIST_ENDPOINT=" + base}, nil
			}},
		{name: "opencode", readTool: "read", pkg: "opencode-ai", upstream: opencodeUpstream, point: opencodePoint},
	}
}

// geminiUpstream is the proxy's upstream list from Gemini CLI's own base
// URLs: GOOGLE_GEMINI_BASE_URL (the Gemini API's) and CODE_ASSIST_ENDPOINT
// (Code Assist's), "" when neither is set.
func geminiUpstream(getenv func(string) string) string {
	var spec []string
	if u := getenv("GOOGLE_GEMINI_BASE_URL"); u != "" {
		spec = append(spec, "gemini="+u)
	}
	if u := getenv("CODE_ASSIST_ENDPOINT"); u != "" {
		spec = append(spec, "codeassist="+u)
	}
	return strings.Join(spec, ",")
}

// codexBaseURL is Codex's own base URL of the OpenAI API: OPENAI_BASE_URL,
// else openai_base_url at the top of $CODEX_HOME/config.toml (default
// ~/.codex).
func codexBaseURL(getenv func(string) string) string {
	if u := getenv("OPENAI_BASE_URL"); u != "" {
		return u
	}
	u, _ := codexTopKey(getenv, "openai_base_url")
	return u
}

// codexTopKey reads key among the top-level keys of $CODEX_HOME/config.toml
// (default ~/.codex): its string value and the file, "" when unset.
func codexTopKey(getenv func(string) string, key string) (value, file string) {
	home := getenv("CODEX_HOME")
	if home == "" {
		h := getenv("HOME")
		if h == "" {
			return "", ""
		}
		home = filepath.Join(h, ".codex")
	}
	file = filepath.Join(home, "config.toml")
	f, err := os.Open(file)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			return "", "" // past the top-level keys
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if s, err := strconv.Unquote(v); err == nil {
			return s, file
		}
		return strings.Trim(v, `'`), file
	}
	return "", ""
}

// opencodeProviders are opencode's providers the launcher points at the
// proxy: the proxy's API family and the path opencode's baseURL ends in.
var opencodeProviders = []struct{ name, api, path string }{
	{"anthropic", "anthropic", "/v1"}, {"openai", "openai", "/v1"}, {"google", "gemini", "/v1beta"},
}

// opencodeUpstream is the proxy's upstream list from the baseURL options
// the user gave opencode's providers in OPENCODE_CONFIG_CONTENT
// ("anthropic=URL,openai=URL"), "" when none is set.
func opencodeUpstream(getenv func(string) string) string {
	var cfg struct {
		Provider map[string]struct {
			Options struct {
				BaseURL string `json:"baseURL"`
			} `json:"options"`
		} `json:"provider"`
	}
	if json.Unmarshal([]byte(getenv("OPENCODE_CONFIG_CONTENT")), &cfg) != nil {
		return ""
	}
	var spec []string
	for _, p := range opencodeProviders {
		u := strings.TrimRight(cfg.Provider[p.name].Options.BaseURL, "/")
		if u == "" {
			continue
		}
		if p.api != "openai" { // the proxy's OpenAI upstream keeps its /v1
			u = strings.TrimSuffix(u, p.path)
		}
		spec = append(spec, p.api+"="+u)
	}
	return strings.Join(spec, ",")
}

// opencodePoint points opencode's Anthropic, OpenAI and Google providers
// at the proxy through OPENCODE_CONFIG_CONTENT, merged into the content
// the user set there (whose other settings are kept).
func opencodePoint(base string, getenv func(string) string) ([]string, []string) {
	cfg := map[string]any{}
	if s := getenv("OPENCODE_CONFIG_CONTENT"); s != "" {
		_ = json.Unmarshal([]byte(s), &cfg) // unreadable: opencode will say so; ours still applies
	}
	providers, _ := cfg["provider"].(map[string]any)
	if providers == nil {
		providers = map[string]any{}
	}
	for _, op := range opencodeProviders {
		name := op.name
		p, _ := providers[name].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		opts, _ := p["options"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
		}
		opts["baseURL"] = base + op.path
		p["options"] = opts
		providers[name] = p
	}
	cfg["provider"] = providers
	b, _ := json.Marshal(cfg) // maps of JSON values always marshal
	return []string{"OPENCODE_CONFIG_CONTENT=" + string(b)}, nil
}

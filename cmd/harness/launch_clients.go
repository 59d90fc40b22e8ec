package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A provider is a model API a client talks to: its public endpoint and
// the environment variable its official SDKs read a base URL from.
type provider struct {
	name, public, envVar string
}

var (
	anthropicAPI = provider{name: "anthropic", public: "https://api.anthropic.com", envVar: "ANTHROPIC_BASE_URL"}
	openaiAPI    = provider{name: "openai", public: "https://api.openai.com/v1", envVar: "OPENAI_BASE_URL"}
	geminiAPI    = provider{name: "gemini", public: "https://generativelanguage.googleapis.com", envVar: "GOOGLE_GEMINI_BASE_URL"}
)

// upstream is where p's requests go: the base URL the user set for the
// client (env, or what the client's own config says), else the public
// endpoint.
func (p provider) upstream(getenv func(string) string, configured string) string {
	if configured != "" {
		return configured
	}
	if v := strings.TrimSpace(getenv(p.envVar)); v != "" {
		return v
	}
	return p.public
}

// A launchClient is an agent CLI the launcher runs through the proxy.
type launchClient struct {
	// name is the command, both harness's ("harness claude") and the
	// client's executable on PATH.
	name, summary string
	// providers are the APIs the client may call, each given a proxy.
	providers []provider
	// configured reads the base URL the client's own configuration sets
	// for a provider ("" when none).
	configured func(getenv func(string) string, p provider) string
	// point returns the environment entries and the leading arguments that
	// send the client's calls of each provider to the proxy at its URL.
	point func(getenv func(string) string, proxies map[string]string) (env, args []string, err error)
	// grant, when set, is for a client that may not read its project's
	// git-ignored files (Gemini CLI's read_file refuses them): the proxy
	// spills outside the project instead, in a folder these leading
	// arguments add to what the client may read.
	grant func(dir string) []string
}

// launchClients lists the clients "harness CLIENT" runs.
func launchClients() []launchClient {
	return []launchClient{
		{name: "claude", summary: "run Claude Code (claude on PATH) through harness: its tool results cut, spilled where it can read them, recorded",
			providers: []provider{anthropicAPI}, point: pointEnv(anthropicAPI)},
		{name: "codex", summary: "run Codex CLI (codex on PATH) through harness",
			providers: []provider{openaiAPI}, configured: codexConfigured, point: pointCodex},
		{name: "gemini", summary: "run Gemini CLI (gemini on PATH) through harness",
			providers: []provider{geminiAPI}, point: pointEnv(geminiAPI),
			grant: func(dir string) []string { return []string{"--include-directories", dir} }},
		{name: "opencode", summary: "run opencode (opencode on PATH) through harness, for its Anthropic, OpenAI and Google providers",
			providers: []provider{anthropicAPI, openaiAPI, geminiAPI}, configured: opencodeConfigured, point: pointOpencode},
	}
}

// pointEnv points a client that reads its provider's base URL from p's
// environment variable.
func pointEnv(p provider) func(func(string) string, map[string]string) ([]string, []string, error) {
	return func(_ func(string) string, proxies map[string]string) ([]string, []string, error) {
		return []string{p.envVar + "=" + proxies[p.name]}, nil, nil
	}
}

// codexHome is Codex's configuration folder.
func codexHome(getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); d != "" {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// codexSetting reads the top-level string setting key of Codex's
// config.toml, or of the [model_providers.ID] table when table is set
// ("" when absent). Only plain `key = "value"` lines are read: a launcher
// needs two settings, not a TOML parser.
func codexSetting(getenv func(string) string, table, key string) string {
	home := codexHome(getenv)
	if home == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		return ""
	}
	line := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(key) + `\s*=\s*("(?:[^"\\]|\\.)*")\s*(#.*)?$`)
	current := ""
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			current = strings.Trim(strings.TrimSpace(strings.SplitN(t, "#", 2)[0]), "[]")
			continue
		}
		if current != table {
			continue
		}
		if m := line.FindStringSubmatch(l); m != nil {
			if v, err := strconv.Unquote(m[1]); err == nil {
				return v
			}
		}
	}
	return ""
}

// codexProvider is the model provider Codex's config selects ("" for its
// built-in OpenAI one).
func codexProvider(getenv func(string) string) string {
	if id := codexSetting(getenv, "", "model_provider"); id != "openai" {
		return id
	}
	return ""
}

// codexConfigured is the base URL Codex's config sets: the selected
// provider's base_url, or openai_base_url for the built-in one.
func codexConfigured(getenv func(string) string, _ provider) string {
	if id := codexProvider(getenv); id != "" {
		return codexSetting(getenv, "model_providers."+id, "base_url")
	}
	return codexSetting(getenv, "", "openai_base_url")
}

// pointCodex overrides, for this run only (-c), the base URL of the
// provider Codex's config selects.
func pointCodex(getenv func(string) string, proxies map[string]string) ([]string, []string, error) {
	url := strconv.Quote(proxies[openaiAPI.name] + "/v1")
	if id := codexProvider(getenv); id != "" {
		if codexSetting(getenv, "model_providers."+id, "base_url") == "" {
			return nil, nil, fmt.Errorf("Codex's config selects model_provider %q but gives it no base_url harness can read in %s", id, filepath.Join(codexHome(getenv), "config.toml"))
		}
		return nil, []string{"-c", "model_providers." + id + ".base_url=" + url}, nil
	}
	return nil, []string{"-c", "openai_base_url=" + url}, nil
}

// pointOpencode adds, to the configuration opencode reads from
// OPENCODE_CONFIG_CONTENT (merged over its config files), each provider's
// baseURL at its proxy.
func pointOpencode(getenv func(string) string, proxies map[string]string) ([]string, []string, error) {
	cfg := map[string]any{}
	if s := getenv("OPENCODE_CONFIG_CONTENT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cfg); err != nil {
			return nil, nil, fmt.Errorf("OPENCODE_CONFIG_CONTENT is not a JSON object: %w", err)
		}
	}
	provs, _ := cfg["provider"].(map[string]any)
	if provs == nil {
		provs = map[string]any{}
	}
	for id, api := range map[string]provider{"anthropic": anthropicAPI, "openai": openaiAPI, "google": geminiAPI} {
		p, _ := provs[id].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		o, _ := p["options"].(map[string]any)
		if o == nil {
			o = map[string]any{}
		}
		base := proxies[api.name]
		switch api {
		case openaiAPI:
			base += "/v1"
		case geminiAPI:
			base += "/v1beta"
		}
		o["baseURL"] = base
		p["options"] = o
		provs[id] = p
	}
	cfg["provider"] = provs
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	return []string{"OPENCODE_CONFIG_CONTENT=" + string(b)}, nil, nil
}

// opencodeConfigured is the baseURL the user's OPENCODE_CONFIG_CONTENT
// gives the provider, if any.
func opencodeConfigured(getenv func(string) string, p provider) string {
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
	id := p.name
	if p == geminiAPI {
		id = "google"
	}
	return cfg.Provider[id].Options.BaseURL
}

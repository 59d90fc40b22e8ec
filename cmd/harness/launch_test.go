package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLaunchExitCodeAndEnv runs the launcher in front of a stand-in
// executable on PATH that prints what it was given and exits 7: the
// launcher's exit code is the client's, the client's base URL points at a
// loopback proxy, the user's own base URL is not passed on, and
// .harness/ is git-ignored.
func TestLaunchExitCodeAndEnv(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"url=$ANTHROPIC_BASE_URL args=$*\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/upstream")
	work := t.TempDir()
	t.Chdir(work)
	code, out, errb := runLaunch(t, "claude", "-p", "hi there")
	if code != 7 {
		t.Errorf("exit code %d, want the client's 7; stderr:\n%s", code, errb)
	}
	if !strings.Contains(out, "url=http://127.0.0.1:") || strings.Contains(out, "9/upstream") || !strings.Contains(out, "args=-p hi there") {
		t.Errorf("the client got %q", out)
	}
	if !strings.Contains(errb, "http://127.0.0.1:9/upstream") {
		t.Errorf("the launcher did not name the upstream it forwards to:\n%s", errb)
	}
	gi, err := os.ReadFile(filepath.Join(work, ".harness", ".gitignore"))
	if err != nil || !strings.Contains(string(gi), "\n*\n") {
		t.Errorf(".harness/.gitignore: %q, %v", gi, err)
	}
}

// TestLaunchMissingClient: a client not on PATH is a clear error.
func TestLaunchMissingClient(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errb := runLaunch(t, "codex", "exec", "hi")
	if code != 1 || !strings.Contains(errb, "codex is not on PATH") {
		t.Errorf("code %d, stderr %q", code, errb)
	}
}

// TestCodexPoint: the launcher overrides, for the run only, the base URL
// of the provider Codex's config selects, and reads the upstream there.
func TestCodexPoint(t *testing.T) {
	tests := []struct {
		name, config, env string
		wantArgs          []string
		wantUp            string
		wantErr           bool
	}{
		{name: "no config", wantArgs: []string{"-c", `openai_base_url="http://p/v1"`}, wantUp: "https://api.openai.com/v1"},
		{name: "env", env: "https://gw.example/v1", wantArgs: []string{"-c", `openai_base_url="http://p/v1"`}, wantUp: "https://gw.example/v1"},
		{name: "openai_base_url", config: "openai_base_url = \"https://corp/v1\" # ours\n", wantArgs: []string{"-c", `openai_base_url="http://p/v1"`}, wantUp: "https://corp/v1"},
		{name: "own provider", config: "model_provider = \"corp\"\n[model_providers.corp]\nname = \"corp\"\nbase_url = \"https://corp.example/v1\"\n",
			wantArgs: []string{"-c", `model_providers.corp.base_url="http://p/v1"`}, wantUp: "https://corp.example/v1"},
		{name: "own provider without base_url", config: "model_provider = \"corp\"\n[model_providers.corp]\nname = \"corp\"\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(tt.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string {
				switch k {
				case "CODEX_HOME":
					return home
				case "OPENAI_BASE_URL":
					return tt.env
				}
				return ""
			}
			_, args, err := pointCodex(getenv, map[string]string{"openai": "http://p"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if err == nil && !slices.Equal(args, tt.wantArgs) {
				t.Errorf("args %q, want %q", args, tt.wantArgs)
			}
			if up := openaiAPI.upstream(getenv, codexConfigured(getenv, openaiAPI)); err == nil && up != tt.wantUp {
				t.Errorf("upstream %q, want %q", up, tt.wantUp)
			}
		})
	}
}

// TestOpencodePoint: the launcher keeps the user's OPENCODE_CONFIG_CONTENT
// and sets each provider's baseURL to its proxy; the user's baseURL is the
// upstream.
func TestOpencodePoint(t *testing.T) {
	user := `{"model":"anthropic/claude-sonnet-4-5","provider":{"anthropic":{"options":{"baseURL":"https://corp/anthropic","apiKey":"k"}}}}`
	getenv := func(k string) string {
		if k == "OPENCODE_CONFIG_CONTENT" {
			return user
		}
		return ""
	}
	if up := anthropicAPI.upstream(getenv, opencodeConfigured(getenv, anthropicAPI)); up != "https://corp/anthropic" {
		t.Errorf("anthropic upstream %q", up)
	}
	if up := geminiAPI.upstream(getenv, opencodeConfigured(getenv, geminiAPI)); up != geminiAPI.public {
		t.Errorf("gemini upstream %q", up)
	}
	env, _, err := pointOpencode(getenv, map[string]string{"anthropic": "http://a", "openai": "http://o", "gemini": "http://g"})
	if err != nil || len(env) != 1 {
		t.Fatal(env, err)
	}
	var cfg struct {
		Model    string `json:"model"`
		Provider map[string]struct {
			Options map[string]string `json:"options"`
		} `json:"provider"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(env[0], "OPENCODE_CONFIG_CONTENT=")), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "anthropic/claude-sonnet-4-5" || cfg.Provider["anthropic"].Options["apiKey"] != "k" {
		t.Errorf("the user's settings were lost: %+v", cfg)
	}
	for id, want := range map[string]string{"anthropic": "http://a", "openai": "http://o/v1", "google": "http://g/v1beta"} {
		if got := cfg.Provider[id].Options["baseURL"]; got != want {
			t.Errorf("%s baseURL %q, want %q", id, got, want)
		}
	}
	if _, _, err := pointOpencode(func(string) string { return "{not json" }, nil); err == nil {
		t.Error("a malformed OPENCODE_CONFIG_CONTENT was accepted")
	}
}

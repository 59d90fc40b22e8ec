package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness/proxy"
)

// TestLaunchPassesThrough: a client on PATH (a script standing in for
// Claude Code) gets its arguments as they are and the proxy's address in
// ANTHROPIC_BASE_URL, and harness exits with its exit code; the project's
// .harness/ is git-ignored.
func TestLaunchPassesThrough(t *testing.T) {
	bin, work := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\necho \"args:$*\"\necho \"base:$ANTHROPIC_BASE_URL\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("HARNESS_DB", "")
	var out, errb bytes.Buffer
	code := runMain(context.Background(), []string{"claude", "-p", "hi there", "--verbose"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
	if code != 3 {
		t.Errorf("exit %d, want the client's 3; stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "args:-p hi there --verbose\n") {
		t.Errorf("the client got other arguments:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "base:http://127.0.0.1:") || !strings.Contains(out.String(), "/_harness/") {
		t.Errorf("the client was not pointed at the proxy:\n%s", out.String())
	}
	if b, err := os.ReadFile(filepath.Join(work, ".harness", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf(".harness/.gitignore: %q %v", b, err)
	}
	code = runMain(context.Background(), []string{"codex", "exec", "x"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
	if code == 0 || !strings.Contains(errb.String(), "codex is not on PATH") {
		t.Errorf("a missing client: exit %d, stderr %s", code, errb.String())
	}
}

// TestLaunchUpstream: the upstream is the client's own base URL setting
// for its provider, the public endpoints otherwise.
func TestLaunchUpstream(t *testing.T) {
	codexHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("model = \"gpt-5\"\nopenai_base_url = \"http://10.0.0.1:8/v1\" # mine\n[x]\nopenai_base_url = \"http://no\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clients := map[string]launchClient{}
	for _, c := range launchClients() {
		clients[c.name] = c
	}
	tests := []struct {
		client string
		env    map[string]string
		want   string
	}{
		{"claude", map[string]string{"ANTHROPIC_BASE_URL": "http://a:1"}, "anthropic=http://a:1"},
		{"claude", nil, ""},
		{"gemini", map[string]string{"GOOGLE_GEMINI_BASE_URL": "http://g:1"}, "gemini=http://g:1"},
		{"gemini", map[string]string{"GOOGLE_GEMINI_BASE_URL": "http://g:1", "CODE_ASSIST_ENDPOINT": "http://ca:2"}, "gemini=http://g:1,codeassist=http://ca:2"},
		{"gemini", nil, ""},
		{"codex", map[string]string{"OPENAI_BASE_URL": "http://o:1/v1", "CODEX_HOME": codexHome}, "openai=http://o:1/v1"},
		{"codex", map[string]string{"CODEX_HOME": codexHome}, "openai=http://10.0.0.1:8/v1"},
		{"codex", map[string]string{"HOME": t.TempDir()}, ""},
		{"opencode", map[string]string{"ANTHROPIC_BASE_URL": "http://a:1"}, ""},
		{"opencode", map[string]string{"OPENCODE_CONFIG_CONTENT": `{"provider":{"anthropic":{"options":{"baseURL":"http://a:1/v1/"}},` +
			`"openai":{"options":{"baseURL":"http://o:1/v1"}},"google":{"options":{"baseURL":"http://g:1/v1beta"}}}}`},
			"anthropic=http://a:1,openai=http://o:1/v1,gemini=http://g:1"},
		{"opencode", map[string]string{"OPENCODE_CONFIG_CONTENT": `{"model":"anthropic/x","provider":{"anthropic":{"options":{"apiKey":"k"}}}}`}, ""},
		{"opencode", map[string]string{"OPENCODE_CONFIG_CONTENT": `{not json`}, ""},
	}
	for _, tc := range tests {
		getenv := func(k string) string { return tc.env[k] }
		if got := launchUpstream(clients[tc.client], getenv); got != tc.want {
			t.Errorf("%s %v: upstream %q, want %q", tc.client, tc.env, got, tc.want)
		}
	}
}

// TestOpencodePoint: the user's OPENCODE_CONFIG_CONTENT is kept and the
// three providers' baseURL point at the proxy.
func TestOpencodePoint(t *testing.T) {
	env, args := opencodePoint("http://127.0.0.1:5/_harness/t", func(k string) string {
		if k == "OPENCODE_CONFIG_CONTENT" {
			return `{"model":"anthropic/claude-sonnet-4-5","provider":{"anthropic":{"options":{"apiKey":"k"}}}}`
		}
		return ""
	})
	if len(args) != 0 || len(env) != 1 {
		t.Fatalf("env %q args %q", env, args)
	}
	var cfg struct {
		Model    string
		Provider map[string]struct {
			Options map[string]string
		}
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(env[0], "OPENCODE_CONFIG_CONTENT=")), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "anthropic/claude-sonnet-4-5" || cfg.Provider["anthropic"].Options["apiKey"] != "k" ||
		cfg.Provider["anthropic"].Options["baseURL"] != "http://127.0.0.1:5/_harness/t/v1" ||
		cfg.Provider["google"].Options["baseURL"] != "http://127.0.0.1:5/_harness/t/v1beta" {
		t.Errorf("config %+v", cfg)
	}
}

// TestLaunchReusesProxy: with HARNESS_PROXY naming a running harness
// proxy, the launcher registers the client's route there (its spill
// folder the project) and points the client at it, starting no proxy
// and opening no store of its own; a HARNESS_PROXY that is no URL, or
// where no harness proxy answers, is a clear error and the client does
// not run.
func TestLaunchReusesProxy(t *testing.T) {
	px, err := proxy.New(&proxy.Options{Upstream: "http://127.0.0.1:1", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	srv := httptest.NewServer(px)
	defer srv.Close()
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	bin, work := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\necho \"base:$ANTHROPIC_BASE_URL\"\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HARNESS_DB", "")
	tests := []struct {
		name, running, wantErr string
	}{
		{"running proxy", srv.URL + "/", ""},
		{"not a URL", "127.0.0.1:9", "want the running proxy's URL"},
		{"no harness proxy", other.URL, "did not register a route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HARNESS_PROXY", tc.running)
			var out, errb bytes.Buffer
			code := runMain(context.Background(), []string{"claude", "-p", "hi"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
			if tc.wantErr != "" {
				if code == 0 || !strings.Contains(errb.String(), tc.wantErr) || out.Len() != 0 {
					t.Errorf("exit %d, stdout %q, stderr %q; want an error saying %q", code, out.String(), errb.String(), tc.wantErr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			base, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "base:"+srv.URL+"/_harness/")
			if !ok || base == "" || strings.Contains(base, "/") {
				t.Fatalf("the client was not pointed at the running proxy's route:\n%s", out.String())
			}
			resp, err := http.Get(srv.URL + "/_harness/" + base + "/stats")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the route answers %d: not registered", resp.StatusCode)
			}
			if _, err := os.Stat(filepath.Join(work, ".harness", "harness.db")); err == nil {
				t.Errorf("the launcher opened a store of its own")
			}
		})
	}
}

// TestLaunchMissingClientSaysHowToInstall: each launcher whose client is
// not on PATH exits 1 with one line naming the npm package to install
// (the ones .ci/clients pins), and starts nothing.
func TestLaunchMissingClientSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
	for client, pkg := range map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli", "opencode": "opencode-ai"} {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), []string{client, "-p", "hi"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
		want := "harness " + client + ": " + client + " is not on PATH"
		if code != 1 || !strings.HasPrefix(errb.String(), want) || !strings.Contains(errb.String(), "(npm install -g "+pkg+")") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("harness %s: exit %d, stderr %q; want exit 1 and one line %q … (npm install -g %s)", client, code, errb.String(), want, pkg)
		}
	}
	if _, err := os.Stat(".harness"); err == nil {
		t.Errorf("a launcher with no client made .harness/")
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchBypass: the settings that send a client's model calls around
// the proxy are each named, with what would put the run through harness;
// settings that keep them on the proxy's path say nothing.
func TestLaunchBypass(t *testing.T) {
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home, oldHome, keyHome, work, keyWork := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	write(filepath.Join(home, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"oauth-personal"}}}`)
	write(filepath.Join(oldHome, ".gemini", "settings.json"), `{"selectedAuthType":"vertex-ai"}`)
	write(filepath.Join(keyHome, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`)
	write(filepath.Join(keyWork, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`)
	claudeHome := t.TempDir()
	write(filepath.Join(claudeHome, ".claude", "settings.json"), `{"env":{"CLAUDE_CODE_USE_VERTEX":"1","CLOUD_ML_REGION":"us-east5"}}`)
	ollama, profile, plain := t.TempDir(), t.TempDir(), t.TempDir()
	write(filepath.Join(ollama, "config.toml"), "model = \"qwen3\"\nmodel_provider = \"ollama\" # local\n")
	write(filepath.Join(profile, "config.toml"), "model = \"gpt-5\"\n[profiles.local]\nmodel_provider = \"ollama\"\n")
	write(filepath.Join(plain, "config.toml"), "model = \"gpt-5\"\nmodel_provider = \"openai\"\n")
	for _, tc := range []struct {
		name   string
		bypass func(func(string) string, string) string
		env    map[string]string
		cwd    string
		want   string // "" for no warning
	}{
		{"claude bedrock", claudeBypass, map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1"}, work, "Claude Code sends its model calls to Amazon Bedrock"},
		{"claude vertex", claudeBypass, map[string]string{"CLAUDE_CODE_USE_VERTEX": "true"}, work, "Google Vertex AI"},
		{"claude off", claudeBypass, map[string]string{"CLAUDE_CODE_USE_BEDROCK": "0"}, work, ""},
		{"claude settings", claudeBypass, map[string]string{"HOME": claudeHome}, work, "CLAUDE_CODE_USE_VERTEX is set in " + filepath.Join(claudeHome, ".claude", "settings.json")},
		{"gemini google login", geminiBypass, map[string]string{"HOME": home}, work, ""},
		{"gemini older key", geminiBypass, map[string]string{"HOME": oldHome}, work, "uses Vertex AI"},
		{"gemini api key", geminiBypass, map[string]string{"HOME": keyHome}, work, ""},
		{"gemini workspace api key", geminiBypass, map[string]string{"HOME": oldHome}, keyWork, ""},
		{"gemini vertex env", geminiBypass, map[string]string{"HOME": keyHome, "GOOGLE_GENAI_USE_VERTEXAI": "True"}, work, "GOOGLE_GENAI_USE_VERTEXAI is set"},
		{"gemini no settings", geminiBypass, map[string]string{"HOME": t.TempDir()}, work, ""},
		{"codex own provider", codexBypass, map[string]string{"CODEX_HOME": ollama}, work, `model_provider = "ollama"`},
		{"codex profile only", codexBypass, map[string]string{"CODEX_HOME": profile}, work, ""},
		{"codex openai", codexBypass, map[string]string{"CODEX_HOME": plain}, work, ""},
	} {
		got := tc.bypass(func(k string) string { return tc.env[k] }, tc.cwd)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestLaunchWarnsOfBypass: a client whose settings send its calls around
// the proxy still runs, after a warning on stderr that says so.
func TestLaunchWarnsOfBypass(t *testing.T) {
	bin, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho ran\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CLAUDE_CODE_USE_BEDROCK", "1")
	t.Setenv("HARNESS_DB", "")
	var out, errb bytes.Buffer
	code := runMain(context.Background(), []string{"claude", "-p", "hi"}, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv})
	if code != 0 || !strings.Contains(out.String(), "ran") {
		t.Errorf("exit %d, stdout %q: the client did not run", code, out.String())
	}
	if !strings.Contains(errb.String(), "harness claude: warning: CLAUDE_CODE_USE_BEDROCK is set") {
		t.Errorf("stderr %q", errb.String())
	}
}

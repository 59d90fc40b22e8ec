package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A client's settings can send its model calls where the launcher does
// not point: Claude Code on Amazon Bedrock, Google Vertex AI or Microsoft
// Foundry; Gemini CLI on Vertex AI; Codex on a provider of the user's own. The proxy then
// sees none of the run's calls, guards nothing and records nothing, and
// the run would look like one harness saved nothing on. The launcher still
// runs the client (its work is the user's), after a warning that says why
// the run is not guarded and what would put it through harness.

// claudeBypass says why Claude Code's calls do not reach the proxy, ""
// when they do: a switch to another cloud in the environment or in the
// "env" of Claude Code's settings (the project's local and shared ones,
// the user's).
func claudeBypass(getenv func(string) string, cwd string) string {
	files := []string{filepath.Join(cwd, ".claude", "settings.local.json"), filepath.Join(cwd, ".claude", "settings.json")}
	if home := getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	settings := claudeSettingsEnvs(files)
	for _, v := range []struct{ env, cloud string }{
		{"CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"}, {"CLAUDE_CODE_USE_VERTEX", "Google Vertex AI"}, {"CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry"},
	} {
		where := ""
		if truthy(getenv(v.env)) {
			where = "is set"
		} else {
			for _, s := range settings {
				if truthy(fmt.Sprint(s.env[v.env])) {
					where = "is set in " + s.file
					break
				}
			}
		}
		if where != "" {
			return fmt.Sprintf("%s %s: Claude Code sends its model calls to %s, not to ANTHROPIC_BASE_URL, so harness sees none of them and "+
				"this run is not guarded or recorded; unset it to run Claude Code on the Anthropic API through harness", v.env, where, v.cloud)
		}
	}
	return ""
}

// settingsEnv is the "env" of one of Claude Code's settings files.
type settingsEnv struct {
	file string
	env  map[string]any
}

// claudeSettingsEnvs reads the "env" of each of files that exists and
// reads as JSON, in their order.
func claudeSettingsEnvs(files []string) []settingsEnv {
	var out []settingsEnv
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			Env map[string]any `json:"env"`
		}
		if json.Unmarshal(b, &s) == nil && len(s.Env) > 0 {
			out = append(out, settingsEnv{file: f, env: s.Env})
		}
	}
	return out
}

// geminiBypass says why Gemini CLI's calls do not reach the proxy, ""
// when they do: the launcher points the Gemini API (an API key) and Code
// Assist (signed in with Google, Cloud Shell, a machine's credentials) at
// it, not Vertex AI.
func geminiBypass(getenv func(string) string, cwd string) string {
	const notGuarded = ", which harness does not read, so this run is not guarded or recorded; to run it through harness, " +
		"use a Gemini API key (GEMINI_API_KEY) or sign in with Google (/auth)"
	if truthy(getenv("GOOGLE_GENAI_USE_VERTEXAI")) {
		return "GOOGLE_GENAI_USE_VERTEXAI is set: Gemini CLI sends its model calls to Vertex AI" + notGuarded
	}
	if auth, file := geminiAuth(getenv, cwd); auth == "vertex-ai" {
		return fmt.Sprintf("Gemini CLI uses Vertex AI (security.auth.selectedType %q in %s): it sends its model calls there", auth, file) + notGuarded
	}
	return ""
}

// geminiAuth is the sign-in Gemini CLI's settings select and the file
// that says so: the workspace's .gemini/settings.json over the user's
// ~/.gemini/settings.json, security.auth.selectedType or the older
// selectedAuthType. A file that does not read as JSON says nothing.
func geminiAuth(getenv func(string) string, cwd string) (auth, file string) {
	files := []string{filepath.Join(cwd, ".gemini", "settings.json")}
	if home := getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".gemini", "settings.json"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			Security struct {
				Auth struct {
					SelectedType string `json:"selectedType"`
				} `json:"auth"`
			} `json:"security"`
			SelectedAuthType string `json:"selectedAuthType"`
		}
		if json.Unmarshal(b, &s) != nil {
			continue
		}
		if a := s.Security.Auth.SelectedType; a != "" {
			return a, f
		}
		if a := s.SelectedAuthType; a != "" {
			return a, f
		}
	}
	return "", ""
}

// codexBypass says why Codex's calls do not reach the proxy, "" when they
// do: openai_base_url, which the launcher sets, serves only the built-in
// OpenAI provider.
func codexBypass(getenv func(string) string, _ string) string {
	p, file := codexTopKey(getenv, "model_provider")
	if p == "" || p == "openai" {
		return ""
	}
	return fmt.Sprintf("model_provider = %q in %s: Codex sends its model calls to that provider's base_url, not to openai_base_url, "+
		"so harness sees none of them and this run is not guarded or recorded; to run it through harness, point that provider's "+
		"base_url at a running harness proxy (harness proxy --upstream openai=ITS_URL)", p, file)
}

// truthy reads an environment switch as the clients do: 1, true, yes or
// on, in any case.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

package clientctx

import "testing"

func TestClassifiers(t *testing.T) {
	tests := []struct {
		role, text    string
		codex, gemini bool
	}{
		{"user", "# AGENTS.md instructions for /repo\n\nbe brief", true, false},
		{"user", "  <ENVIRONMENT_CONTEXT>cwd</ENVIRONMENT_CONTEXT>", true, false},
		{"user", "<skill>\nname: x", true, false},
		{"developer", "anything", true, false},
		{"user", "<session_context>\ntoday", false, true},
		{"user", "\n<state_snapshot>summary", false, true},
		{"user", "Here is the user's editor context: ...", false, true},
		{"user", "<Session_context>", false, false}, // Gemini's prefixes are case-sensitive
		{"user", "fix the build", false, false},
		{"user", "", false, false},
	}
	for _, tt := range tests {
		if got := Codex(tt.role, tt.text); got != tt.codex {
			t.Errorf("Codex(%q, %q) = %v", tt.role, tt.text, got)
		}
		if got := Gemini(tt.text); got != tt.gemini {
			t.Errorf("Gemini(%q) = %v", tt.text, got)
		}
	}
}

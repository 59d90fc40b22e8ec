package clientctx

import "testing"

func TestClassifiers(t *testing.T) {
	tests := []struct {
		role, text    string
		codex, gemini bool
		claude        bool
	}{
		{"user", "# AGENTS.md instructions for /repo\n\nbe brief", true, false, false},
		{"user", "  <ENVIRONMENT_CONTEXT>cwd</ENVIRONMENT_CONTEXT>", true, false, false},
		{"user", "<skill>\nname: x", true, false, false},
		{"developer", "anything", true, false, false},
		{"user", "<session_context>\ntoday", false, true, false},
		{"user", "\n<state_snapshot>summary", false, true, false},
		{"user", "Here is the user's editor context: ...", false, true, false},
		{"user", "<Session_context>", false, false, false}, // Gemini's prefixes are case-sensitive
		{"user", "fix the build", false, false, false},
		{"user", "", false, false, false},
		{"user", "<system-reminder>\nToday's date is 2026-12-02.\n</system-reminder>\n\n", false, false, true},
		{"user", "\n<system-reminder>x", false, false, true},
		{"user", "see <system-reminder> below", false, false, false},
	}
	for _, tt := range tests {
		if got := Codex(tt.role, tt.text); got != tt.codex {
			t.Errorf("Codex(%q, %q) = %v", tt.role, tt.text, got)
		}
		if got := Gemini(tt.text); got != tt.gemini {
			t.Errorf("Gemini(%q) = %v", tt.text, got)
		}
		if got := ClaudeCode(tt.text); got != tt.claude {
			t.Errorf("ClaudeCode(%q) = %v", tt.text, got)
		}
	}
}

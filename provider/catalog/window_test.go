package catalog

import "testing"

func TestWindowsLookup(t *testing.T) {
	w := DefaultWindows()
	for _, tc := range []struct {
		model string
		want  int
	}{
		{"gpt-4o", 128000},
		{"gpt-4o-mini-2024-07-18", 128000},
		{"gpt-4", 8192},
		{"gpt-4-1106-preview", 128000},
		{"gpt-4.1-mini", 1047576},
		{"gpt-5", 272000},
		{"gpt-5.1-codex", 272000},
		{"o3-mini", 200000},
		{"o4-mini", 200000},
		{"o1-mini", 128000},
		{"claude-3-5-sonnet-20241022", 200000},
		{"claude-3-haiku-20240307", 200000},
		{"claude-opus-4-1-20250805", 200000},
		{"claude-sonnet-4-5", 200000},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", 200000},
		{"anthropic/claude-haiku-4-5", 200000},
		{"claude-2.1", 100000},
		{"deepseek-chat", 128000},
		{"DeepSeek-R1:7b", 128000},
		{"models/gemini-2.5-pro", 1048576},
		{"gemini-1.5-pro-002", 2097152},
		{"llama3.1:8b", 131072},
		{"llama3:8b", 8192},
		{"meta-llama/Llama-3.3-70B-Instruct", 131072},
		{"qwen2.5-coder:7b", 32768},
		{"qwen-plus-latest", 131072},
	} {
		got, ok := w.Lookup(tc.model)
		if !ok || got != tc.want {
			t.Errorf("Lookup(%q) = %d, %v; want %d", tc.model, got, ok, tc.want)
		}
	}
	for _, m := range []string{"", "unknown-model", "gpt", "o", "claudette"} {
		if n, ok := w.Lookup(m); ok {
			t.Errorf("Lookup(%q) = %d, want unknown", m, n)
		}
	}
	// Overrides: a longer key wins; changing a copy leaves the default.
	w["claude-sonnet-4"] = 1000000
	if n, _ := w.Lookup("claude-sonnet-4-20250514"); n != 1000000 {
		t.Errorf("override not used: %d", n)
	}
	if n, _ := DefaultWindows().Lookup("claude-sonnet-4-20250514"); n != 200000 {
		t.Errorf("default changed: %d", n)
	}
}

package catalog

import (
	"testing"
	"time"
)

func TestCacheLifetime(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  time.Duration
	}{
		{"claude-sonnet-4-20250514", 5 * time.Minute},
		{"claude-opus-4-6", 5 * time.Minute},
		{"Claude-3-5-Haiku", 5 * time.Minute},
		{"anthropic/claude-sonnet-4-5", 5 * time.Minute},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", 5 * time.Minute},
		{"gpt-4o", time.Hour},
		{"gpt-5.2-codex", time.Hour},
		{"openai/gpt-4.1-mini", time.Hour},
		{"o1", time.Hour},
		{"o3-mini", time.Hour},
		{"o4-mini-2025-04-16", time.Hour},
		{"codex-mini-latest", time.Hour},
		{"o30", 0},
		{"claude", 0},
		{"deepseek-chat", 0},
		{"gemini-2.5-pro", 0},
		{"", 0},
		{"  ", 0},
	} {
		if got := CacheLifetime(tc.model); got != tc.want {
			t.Errorf("CacheLifetime(%q) = %v, want %v", tc.model, got, tc.want)
		}
	}
}

// FuzzCacheLifetime: any model name gets one of the three answers, never a
// panic.
func FuzzCacheLifetime(f *testing.F) {
	for _, s := range []string{"claude-sonnet-4-5", "us.anthropic.claude-3", "openai/gpt-4o", "o3", "o30", "codex-mini", ".", "/", "a.b.c/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, model string) {
		if d := CacheLifetime(model); d != 0 && d != AnthropicCacheLifetime && d != OpenAICacheLifetime {
			t.Errorf("CacheLifetime(%q) = %v", model, d)
		}
	})
}

package replay

import (
	"strings"

	"github.com/agentharness/harness/provider/catalog"
)

// imageRule is the rule a replay of rec prices images by: that of the
// recorded model's provider, or, when the source names no model, that of
// the provider its agent talks to (Claude Code: Anthropic; Gemini CLI:
// Gemini; the others: OpenAI).
func imageRule(rec *Recording) catalog.ImageRule {
	if rec.Model != "" {
		return catalog.ImageRuleFor(rec.Model)
	}
	switch {
	case rec.Format == formatClaudeCode:
		return catalog.ImageAnthropic
	case strings.HasPrefix(rec.Format, formatGeminiCLI):
		return catalog.ImageGemini
	}
	return catalog.ImageOpenAI
}

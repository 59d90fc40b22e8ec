package replayengine

import (
	"github.com/agentharness/harness/replay"
	"strings"

	"github.com/agentharness/harness/provider/catalog"
)

// imageRule is the rule a replay of rec prices images by: that of the
// recorded model's provider, or, when the source names no model, that of
// the provider its agent talks to (Claude Code and an Anthropic message
// list: Anthropic; Gemini CLI: Gemini; the others: OpenAI).
func imageRule(rec *replay.Recording) catalog.ImageRule {
	if rec.Model != "" {
		return catalog.ImageRuleFor(rec.Model)
	}
	switch {
	case rec.Format == "claude-code" || rec.Format == "anthropic-messages":
		return catalog.ImageAnthropic
	case strings.HasPrefix(rec.Format, "gemini-cli"):
		return catalog.ImageGemini
	}
	return catalog.ImageOpenAI
}

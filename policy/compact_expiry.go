package policy

import (
	"strings"
	"time"
)

// The pauses after which a provider's automatic prompt cache is certainly
// cold, by its documentation: Anthropic's default cache lives exactly 5
// minutes after its last use; OpenAI's is dropped after 5 to 10 minutes
// of inactivity and kept at most an hour.
const (
	AnthropicCacheExpiry = 5 * time.Minute
	OpenAICacheExpiry    = time.Hour
)

// CacheExpiry returns how long after its last use the provider of model
// guarantees its prompt cache gone: AnthropicCacheExpiry for claude-*
// models, OpenAICacheExpiry for gpt-*, o1, o3, o4 and codex-* models, and
// 0 for a model it does not know. It is the threshold of
// CompactPolicy.ClearWhenIdle that never clears while the cache may still
// be warm (a shorter one would pay a miss no bank has covered). The name
// is matched case-insensitively after dropping a provider path
// ("openai/gpt-4o") and a dotted vendor prefix ("us.anthropic.claude-…").
// A cache asked to live longer (Anthropic's ttl "1h", OpenAI's 24-hour
// retention) outlives this: set ClearWhenIdle to that lifetime instead.
func CacheExpiry(model string) time.Duration {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for {
		switch {
		case strings.HasPrefix(name, "claude-"):
			return AnthropicCacheExpiry
		case strings.HasPrefix(name, "gpt-"), strings.HasPrefix(name, "codex-"),
			family(name, "o1"), family(name, "o3"), family(name, "o4"):
			return OpenAICacheExpiry
		}
		i := strings.IndexByte(name, '.')
		if i < 0 {
			return 0
		}
		name = name[i+1:]
	}
}

// family reports whether name is key or key followed by a separator
// ("o3", "o3-mini"; not "o30").
func family(name, key string) bool {
	return strings.HasPrefix(name, key) && (len(name) == len(key) || strings.ContainsRune("-.:_@", rune(name[len(key)])))
}

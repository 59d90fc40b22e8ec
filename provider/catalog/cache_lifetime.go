package catalog

import (
	"strings"
	"time"
)

// The prompt-cache lifetimes the providers document: how long after its
// last use a cached prefix is certainly gone.
const (
	// AnthropicCacheLifetime is the Messages API's default cache, which
	// lives exactly this long after each use of the cached prefix.
	AnthropicCacheLifetime = 5 * time.Minute
	// AnthropicLongCacheLifetime is its extended cache, asked for with
	// "ttl": "1h" in a cache_control block.
	AnthropicLongCacheLifetime = time.Hour
	// OpenAICacheLifetime is when OpenAI's automatic cache is certainly
	// gone: it is dropped after 5 to 10 minutes of inactivity and kept at
	// most an hour.
	OpenAICacheLifetime = time.Hour
	// DefaultCacheLifetime is the lifetime to assume when the provider is
	// not known: the shortest any of them documents, Anthropic's default
	// and the least OpenAI keeps an idle prefix.
	DefaultCacheLifetime = 5 * time.Minute
)

// CacheLifetime returns how long after its last use the provider of model
// guarantees its prompt cache gone: AnthropicCacheLifetime for claude-*
// models, OpenAICacheLifetime for gpt-*, o1, o3, o4 and codex-* models, and
// 0 for a model it does not know. A pause longer than this finds the cache
// cold, so a policy that clears after it breaks no warm cache. The name
// is matched case-insensitively after dropping a provider path
// ("openai/gpt-4o") and a dotted vendor prefix ("us.anthropic.claude-…").
// A cache asked to live longer (Anthropic's ttl "1h", OpenAI's 24-hour
// retention) outlives this.
func CacheLifetime(model string) time.Duration {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for {
		switch {
		case strings.HasPrefix(name, "claude-"):
			return AnthropicCacheLifetime
		case strings.HasPrefix(name, "gpt-"), strings.HasPrefix(name, "codex-"),
			family(name, "o1"), family(name, "o3"), family(name, "o4"):
			return OpenAICacheLifetime
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

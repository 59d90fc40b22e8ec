package proxy

import (
	"time"

	"github.com/agentharness/harness/provider/catalog"
)

// The prompt-cache lifetimes the providers document (package catalog),
// which decide when a pause has surely emptied the upstream's cache (see
// idle.go). Each wire format reads its own from the request
// (wireFormat.cacheLifetime).
const (
	anthropicCacheLifetime     = catalog.AnthropicCacheLifetime
	anthropicLongCacheLifetime = catalog.AnthropicLongCacheLifetime
	openAICacheLifetime        = catalog.OpenAICacheLifetime
	// shortestCacheLifetime is the shortest of the lifetimes above: below
	// it no format's cache has expired, so the proxy reads no body for it.
	shortestCacheLifetime = anthropicCacheLifetime
)

// anthropicLifetime is the cache lifetime a Messages API request asks
// for: an hour when any cache_control block of it sets "ttl": "1h", else 5
// minutes. A body it cannot read gets the shorter one (the proxy forwards
// such a body unchanged anyway).
func anthropicLifetime(body []byte) time.Duration {
	doc, err := document(body)
	if err == nil && longTTL(body, doc, 0) {
		return anthropicLongCacheLifetime
	}
	return anthropicCacheLifetime
}

// longTTL reports whether the JSON value at s holds, at any depth, a
// "cache_control" object whose "ttl" is "1h". The depth is bounded by the
// scanner's (maxDepth), which every body the proxy reads has passed.
func longTTL(b []byte, s span, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch kind(b, s) {
	case '{':
		fs, err := objectFields(b, s)
		if err != nil {
			return false
		}
		for _, f := range fs {
			if f.Key == "cache_control" && kind(b, f.Value) == '{' {
				if cc, err := objectFields(b, f.Value); err == nil && anyString(b, cc, "ttl", "1h") {
					return true
				}
			}
			if longTTL(b, f.Value, depth+1) {
				return true
			}
		}
	case '[':
		elems, err := arrayElems(b, s)
		if err != nil {
			return false
		}
		for _, e := range elems {
			if longTTL(b, e, depth+1) {
				return true
			}
		}
	}
	return false
}

// openAILifetime is the cache lifetime of a Responses or Chat Completions
// request: an hour, or none (0: the proxy never clears) when the request
// keeps its cache for a day ("prompt_cache_retention": "24h").
func openAILifetime(body []byte) time.Duration {
	fs, err := topFields(body)
	if err == nil && anyString(body, fs, "prompt_cache_retention", "24h") {
		return 0
	}
	return openAICacheLifetime
}

// anyString reports whether a member key of fs is the string want. Every
// member counts, not the first or the last: a body that repeats a key is
// read as asking for the longer cache, so the proxy clears later, never
// while the upstream may still hold the cache.
func anyString(b []byte, fs []field, key, want string) bool {
	for _, f := range fs {
		if f.Key == key && str(b, f.Value) == want {
			return true
		}
	}
	return false
}

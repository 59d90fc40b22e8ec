package catalog

import (
	"sort"
	"strings"
)

// Windows maps model families to their context windows: the most input
// tokens a model accepts in one request. Keys are lower-case family
// prefixes ("gpt-4.1", "claude-sonnet-4"); a model name matches the
// longest key that is a prefix of it ending at a separator ("-", ".", ":",
// "_", "@") or at the end of the name, so "gpt-4" does not claim "gpt-4o".
// A Windows is a plain map: copy [DefaultWindows] and add or override
// entries to adjust it.
type Windows map[string]int

// DefaultWindows returns a fresh copy of the built-in table. Figures are
// the providers' published input limits; where a model's total window
// includes the output (gpt-5: 400k total, 128k output), the input limit is
// used, since that is what a request is rejected for exceeding.
func DefaultWindows() Windows {
	return Windows{
		// OpenAI.
		"gpt-3.5-turbo": 16385,
		"gpt-4":         8192,
		"gpt-4-32k":     32768,
		"gpt-4-turbo":   128000,
		"gpt-4-1106":    128000,
		"gpt-4-0125":    128000,
		"gpt-4o":        128000,
		"chatgpt-4o":    128000,
		"gpt-4.1":       1047576,
		"gpt-4.5":       128000,
		"gpt-5":         272000,
		"o1":            200000,
		"o1-mini":       128000,
		"o1-preview":    128000,
		"o3":            200000,
		"o4-mini":       200000,
		"gpt-oss":       131072,
		"codex-mini":    200000,
		// Anthropic: every Claude 3.x and 4.x model has a 200k window
		// (larger windows are opt-in betas; override to use them).
		"claude":   200000,
		"claude-2": 100000,
		// DeepSeek.
		"deepseek":          128000,
		"deepseek-chat":     128000,
		"deepseek-reasoner": 128000,
		"deepseek-coder":    128000,
		// Google.
		"gemini":           1048576,
		"gemini-1.0":       32760,
		"gemini-pro":       32760,
		"gemini-1.5-pro":   2097152,
		"gemini-1.5-flash": 1048576,
		"gemma":            8192,
		"gemma2":           8192,
		"gemma3":           131072,
		// Meta Llama (the 3.1+ families have 128k; Llama 3 had 8k).
		"llama":      131072,
		"llama3":     8192,
		"llama-3":    8192,
		"llama3.1":   131072,
		"llama-3.1":  131072,
		"llama3.2":   131072,
		"llama-3.2":  131072,
		"llama3.3":   131072,
		"llama-3.3":  131072,
		"llama-4":    1048576,
		"llama4":     1048576,
		"llama2":     4096,
		"llama-2":    4096,
		"meta-llama": 131072,
		// Alibaba Qwen: open weights are 32k native (longer with YaRN,
		// which servers enable explicitly); the hosted tiers differ.
		"qwen":       32768,
		"qwen2.5":    32768,
		"qwen3":      32768,
		"qwen-max":   32768,
		"qwen-plus":  131072,
		"qwen-turbo": 1000000,
		// Mistral.
		"mistral":        32768,
		"mistral-large":  131072,
		"mistral-medium": 131072,
		"mistral-small":  32768,
		"codestral":      256000,
	}
}

// Lookup returns the window of model and whether the table knows its
// family. The name is matched case-insensitively after dropping a
// provider path ("openai/gpt-4o", "models/gemini-2.5-pro"); a dotted
// vendor prefix ("us.anthropic.claude-…" on Bedrock) is dropped when the
// full name matches nothing.
func (w Windows) Lookup(model string) (int, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for {
		if n, ok := w.match(name); ok {
			return n, true
		}
		i := strings.IndexByte(name, '.')
		if i < 0 {
			return 0, false
		}
		name = name[i+1:]
	}
}

func (w Windows) match(name string) (int, bool) {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	// Longest key first; ties broken by name so the result never depends
	// on map order.
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		key := strings.ToLower(k)
		if !strings.HasPrefix(name, key) {
			continue
		}
		if len(name) == len(key) || strings.ContainsRune("-.:_@", rune(name[len(key)])) {
			return w[k], true
		}
	}
	return 0, false
}

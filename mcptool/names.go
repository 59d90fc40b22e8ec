package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxNameLen is the longest tool name sent to a model: OpenAI accepts 64
// characters of [a-zA-Z0-9_-], Anthropic 128.
const maxNameLen = 64

// namespaceSep joins a server name and a tool name when two servers (or a
// server and a built-in tool) offer the same name.
const namespaceSep = "__"

// sanitizeName maps an MCP tool name to the characters every provider
// accepts: anything but letters, digits, "_" and "-" becomes "_".
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}

// fitName shortens a name longer than maxNameLen, keeping it unique with a
// hash of the whole name.
func fitName(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return s[:maxNameLen-len(suffix)] + suffix
}

// toolKey identifies one tool of one server.
type toolKey struct{ server, tool string }

// assignNames gives every tool a name the model will see: its own name
// (sanitized) when no other server and no reserved name has it, else
// "server__tool". Names that still collide (two raw names that sanitize
// alike) get a hash suffix. keys must be in the order tools are offered;
// the result is deterministic for a given order.
func assignNames(keys []toolKey, reserved []string) map[toolKey]string {
	count := map[string]int{}
	for _, r := range reserved {
		count[r] += 2 // a reserved name always collides
	}
	for _, k := range keys {
		count[sanitizeName(k.tool)]++
	}
	out := make(map[toolKey]string, len(keys))
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	for _, k := range keys {
		name := sanitizeName(k.tool)
		if count[name] > 1 {
			name = sanitizeName(k.server) + namespaceSep + name
		}
		name = fitName(name)
		if taken[name] {
			sum := sha256.Sum256([]byte(k.server + "\x00" + k.tool))
			name = fitName(name[:min(len(name), maxNameLen-9)] + "_" + hex.EncodeToString(sum[:])[:8])
		}
		taken[name] = true
		out[k] = name
	}
	return out
}

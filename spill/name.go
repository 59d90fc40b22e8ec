package spill

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Longest sanitised name components. They keep every locator under about
// 160 bytes, so that a marker naming it fits in the smallest result ceiling
// a guard allows (256 bytes).
const (
	maxConversationName = 48
	maxCallName         = 48
	maxToolName         = 40
)

// safeName maps s to a file name of at most max bytes made of ASCII letters,
// digits, '.', '_' and '-', that does not start with '.' or '-' and holds
// no "..". A name that
// had to be changed (or was empty) gets a short hash of the original, so
// two different inputs do not share a name by accident ("a/b" and "a_b").
func safeName(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && i > 0 && s[i-1] == '.':
			b.WriteByte('_') // no ".." anywhere in a name
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".-")
	if name == s && name != "" && len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "-" + hex.EncodeToString(sum[:4])
	if keep := max - len(suffix); len(name) > keep {
		name = name[:keep]
	}
	if name == "" {
		return "x" + suffix
	}
	return name + suffix
}

// conversationFolder returns the folder name [Dir] uses for a conversation
// id, under .harness/spill/.
func conversationFolder(conversation string) string {
	return safeName(conversation, maxConversationName)
}

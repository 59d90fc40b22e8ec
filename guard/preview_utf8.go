package guard

import (
	"unicode/utf8"
)

// replacementLen is the size of U+FFFD, which stands for each invalid byte.
const replacementLen = len(string(utf8.RuneError))

// validHead returns the longest prefix of b[:n] that ends on a rune
// boundary and whose sanitised form (each invalid byte replaced by U+FFFD)
// is at most n bytes, in sanitised form, and how many raw bytes it covers.
// A rune that straddles n is left out, never cut.
func validHead(b []byte, n int) (string, int) {
	n = min(n, len(b))
	if utf8.Valid(b[:n]) {
		// A valid prefix ends on a boundary: a rune straddling n would
		// leave b[:n] with an incomplete sequence.
		return string(b[:n]), n
	}
	out := make([]byte, 0, n)
	i := 0
	for i < n {
		r, size := utf8.DecodeRune(b[i:])
		if i+size > n {
			break
		}
		if r == utf8.RuneError && size == 1 {
			if len(out)+replacementLen > n {
				break
			}
			out = append(out, string(utf8.RuneError)...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return string(out), i
}

// validTail returns the longest suffix of b of at most n raw bytes that
// starts on a rune boundary and whose sanitised form is at most n bytes, in
// sanitised form, and how many raw bytes it covers. A rune that straddles
// the cut is left out, never cut.
func validTail(b []byte, n int) (string, int) {
	n = min(n, len(b))
	start := len(b) - n
	// Skip the continuation bytes of a rune that began before the cut.
	for k := 0; k < utf8.UTFMax-1 && start < len(b) && !utf8.RuneStart(b[start]); k++ {
		start++
	}
	if utf8.Valid(b[start:]) {
		return string(b[start:]), len(b) - start
	}
	// Measure the sanitised size, then drop runes from the front until it
	// fits (invalid bytes grow to three bytes each).
	outLen := sanitizedLen(b[start:])
	for start < len(b) && outLen > n {
		r, size := utf8.DecodeRune(b[start:])
		if r == utf8.RuneError && size == 1 {
			outLen -= replacementLen
		} else {
			outLen -= size
		}
		start += size
	}
	return sanitized(b[start:]), len(b) - start
}

// validPrefix cuts s to at most n bytes at a rune boundary, replacing
// invalid UTF-8 first. It is the last resort for a marker that does not
// fit.
func validPrefix(s string, n int) string {
	out, _ := validHead([]byte(s), n)
	return out
}

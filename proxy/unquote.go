package proxy

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// errStringLiteral is unquote's error for bytes that are not one JSON
// string literal.
var errStringLiteral = errors.New("not a JSON string literal")

// unquote returns the string a JSON string literal holds, as
// encoding/json decodes it (escapes resolved, invalid UTF-8 and lone
// surrogates as U+FFFD), without its validation pass and reflection: the
// tool results of every request are decoded here. A literal with no
// escape and valid UTF-8 is returned as it is (a raw control character
// included, which encoding/json refuses).
func unquote(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", errStringLiteral
	}
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), nil
	}
	var out strings.Builder
	out.Grow(len(body))
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\\')
		if i < 0 {
			i = len(body)
		}
		if !plainRun(&out, body[:i]) {
			return "", errStringLiteral
		}
		body = body[i:]
		if len(body) == 0 {
			break
		}
		n, ok := unescape(&out, body)
		if !ok {
			return "", errStringLiteral
		}
		body = body[n:]
	}
	return out.String(), nil
}

// plainRun writes a run without escapes, each byte of invalid UTF-8 as
// U+FFFD; it reports false on a quote or a control character, which a
// literal holds only escaped. Stretches of printable ASCII and valid
// UTF-8 are copied whole.
func plainRun(out *strings.Builder, run []byte) bool {
	for len(run) > 0 {
		i := 0
		for i < len(run) && run[i] >= ' ' && run[i] != '"' && run[i] < utf8.RuneSelf {
			i++
		}
		out.Write(run[:i])
		run = run[i:]
		if len(run) == 0 {
			break
		}
		c := run[0]
		if c == '"' || c < ' ' {
			return false
		}
		r, size := utf8.DecodeRune(run)
		out.WriteRune(r) // utf8.RuneError for a byte of invalid UTF-8
		run = run[size:]
	}
	return true
}

// unescape writes the escape at the start of b and returns its length.
func unescape(out *strings.Builder, b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '"', '\\', '/':
		out.WriteByte(b[1])
	case 'b':
		out.WriteByte('\b')
	case 'f':
		out.WriteByte('\f')
	case 'n':
		out.WriteByte('\n')
	case 'r':
		out.WriteByte('\r')
	case 't':
		out.WriteByte('\t')
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, false
		}
		if !utf16.IsSurrogate(r) {
			out.WriteRune(r)
			return 6, true
		}
		// A surrogate pairs with a \u escape right after it; alone it is
		// U+FFFD, and what follows is read on its own.
		if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if r2, ok := hex4(b[8:]); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					out.WriteRune(dec)
					return 12, true
				}
			}
		}
		out.WriteRune(utf8.RuneError)
		return 6, true
	default:
		return 0, false
	}
	return 2, true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

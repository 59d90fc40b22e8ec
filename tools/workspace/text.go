package workspace

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sniffBytes is how much of a file is inspected to decide whether it is
// text, the same window git uses.
const sniffBytes = 8000

// binaryReason returns why sample (the start of a file) looks binary, or ""
// for text. A NUL byte decides it, as in git and grep; otherwise a file
// whose sample is more than 30% control bytes (other than tab, newline,
// carriage return, form feed, backspace and escape) is binary too.
func binaryReason(sample []byte) string {
	if len(sample) == 0 {
		return ""
	}
	if i := bytes.IndexByte(sample, 0); i >= 0 {
		return "it contains NUL bytes"
	}
	ctl := 0
	for _, c := range sample {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\b' && c != 0x1b || c == 0x7f {
			ctl++
		}
	}
	if ctl*10 > len(sample)*3 {
		return "most of its bytes are control characters"
	}
	return ""
}

// contentType names the type of a binary sample for the refusal message.
func contentType(sample []byte) string {
	t := http.DetectContentType(sample)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return t
}

// cutUTF8 returns the longest prefix of b of at most n bytes that does not
// end inside a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	i := n
	// b[i] is the first byte left out; while it continues a sequence, the
	// cut is mid-rune, so back up (at most UTFMax-1 bytes; beyond that the
	// data is not UTF-8 and any cut will do).
	for j := 0; j < utf8.UTFMax-1 && i > 0 && !utf8.RuneStart(b[i]); j++ {
		i--
	}
	if !utf8.RuneStart(b[i]) {
		i = n
	}
	return b[:i]
}

// validText returns b as a string with invalid UTF-8 replaced by U+FFFD:
// the model is sent text, never raw bytes.
func validText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// plural returns "1 line" or "2 lines".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

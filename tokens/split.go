package tokens

import (
	"unicode"
	"unicode/utf8"
)

// o200kPattern is the split regexp of o200k_base, which [pieceEnd]
// implements by hand. Seven alternatives, tried in order at each place:
//
//	P1 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	P2 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	P3 \p{N}{1,3}
//	P4  ?[^\s\p{L}\p{N}]+[\r\n/]*
//	P5 \s*[\r\n]+
//	P6 \s+(?!\S)
//	P7 \s+
//
// A backtracking engine (tiktoken's, regexp2) runs this at a cost of
// allocations per piece and rescans of whitespace runs; the hand-written
// splitter reads each character a bounded number of times and allocates
// nothing. Tests hold it to regexp2's pieces on fuzzed text.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// charClass holds what the split pattern asks of one character.
type charClass uint8

const (
	clUpper     charClass = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clLower                           // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clLetter                          // \p{L}
	clNumber                          // \p{N}
	clSpace                           // \s (unicode.IsSpace, as regexp2)
	clLineBreak                       // [\r\n]
)

// asciiClass is slowClass for the ASCII range, computed once (a constant
// table, never written after init).
var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = slowClass(r)
	}
	return t
}()

func slowClass(r rune) charClass {
	var c charClass
	mark := unicode.Is(unicode.M, r)
	lm, lo := unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r)
	if mark || lm || lo || unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= clUpper
	}
	if mark || lm || lo || unicode.Is(unicode.Ll, r) {
		c |= clLower
	}
	if unicode.IsLetter(r) {
		c |= clLetter
	}
	if unicode.IsNumber(r) {
		c |= clNumber
	}
	if unicode.IsSpace(r) {
		c |= clSpace
	}
	if r == '\r' || r == '\n' {
		c |= clLineBreak
	}
	return c
}

// prefixable is [^\r\n\p{L}\p{N}], the optional first character of P1 and P2.
func prefixable(c charClass) bool { return c&(clLineBreak|clLetter|clNumber) == 0 }

// punct is [^\s\p{L}\p{N}], the body of P4.
func punct(c charClass) bool { return c&(clSpace|clLetter|clNumber) == 0 }

// at decodes the character at i of s (valid UTF-8) and its class.
func at(s string, i int) (charClass, int) {
	if s[i] < utf8.RuneSelf {
		return asciiClass[s[i]], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return slowClass(r), n
}

// runOf returns the end of the run of characters from i whose class
// shares a bit with want.
func runOf(s string, i int, want charClass) int {
	for i < len(s) {
		c, n := at(s, i)
		if c&want == 0 {
			break
		}
		i += n
	}
	return i
}

// pieceEnd returns the end of the piece of s (valid UTF-8) that starts at
// i < len(s): the match of o200kPattern there.
func pieceEnd(s string, i int) int {
	c, n := at(s, i)
	if c&(clLetter|clUpper|clLower) != 0 || prefixable(c) {
		if end, ok := letters(s, i, c, n); ok {
			return end
		}
	}
	if c&clNumber != 0 {
		end := i + n
		for k := 1; k < 3 && end < len(s); k++ {
			c2, n2 := at(s, end)
			if c2&clNumber == 0 {
				break
			}
			end += n2
		}
		return end
	}
	if end, ok := punctuation(s, i, c, n); ok {
		return end
	}
	return whitespace(s, i)
}

// letters matches P1, then P2, at i, where the character has class c and
// n bytes: each with its optional prefix first, then without.
func letters(s string, i int, c charClass, n int) (int, bool) {
	starts := [2]int{i, -1}
	if prefixable(c) {
		starts = [2]int{i + n, i}
	}
	for _, j := range starts {
		if j >= 0 {
			if end, ok := p1(s, j); ok {
				return contraction(s, end), true
			}
		}
	}
	for _, j := range starts {
		if j >= 0 {
			if end := runOf(s, j, clUpper); end > j {
				return contraction(s, runOf(s, end, clLower)), true
			}
		}
	}
	return 0, false
}

// p1 matches [upper]*[lower]+ from j: the upper run taken greedily, then
// given back one character at a time until a lower one can start.
func p1(s string, j int) (int, bool) {
	up := runOf(s, j, clUpper)
	if end := runOf(s, up, clLower); end > up {
		return end, true
	}
	// The last lower character inside the upper run (a mark, Lm or Lo is
	// both) starts the lower run, which ends with it: the character after
	// it is not lower.
	last := -1
	for k := j; k < up; {
		c, n := at(s, k)
		if c&clLower != 0 {
			last = k + n
		}
		k += n
	}
	return last, last >= 0
}

// contraction extends end over (?i:'s|'t|'re|'ve|'m|'ll|'d).
func contraction(s string, end int) int {
	if end >= len(s) || s[end] != '\'' {
		return end
	}
	lower := func(k int) byte {
		if k < len(s) && 'A' <= s[k] && s[k] <= 'Z' {
			return s[k] + 'a' - 'A'
		}
		if k < len(s) {
			return s[k]
		}
		return 0
	}
	switch a, b := lower(end+1), lower(end+2); {
	case a == 's' || a == 't' || a == 'm' || a == 'd':
		return end + 2
	case a == 'r' && b == 'e', a == 'v' && b == 'e', a == 'l' && b == 'l':
		return end + 3
	}
	return end
}

// punctuation matches P4 at i:  ?[^\s\p{L}\p{N}]+[\r\n/]*.
func punctuation(s string, i int, c charClass, n int) (int, bool) {
	j := i
	if s[i] == ' ' {
		if i+1 >= len(s) {
			return 0, false
		}
		c, n = at(s, i+1)
		j = i + 1
	}
	if !punct(c) {
		return 0, false
	}
	end := j + n
	for end < len(s) {
		c2, n2 := at(s, end)
		if !punct(c2) {
			break
		}
		end += n2
	}
	for end < len(s) && (s[end] == '\r' || s[end] == '\n' || s[end] == '/') {
		end++
	}
	return end, true
}

// whitespace matches P5, P6 or P7 at i, a whitespace character.
func whitespace(s string, i int) int {
	run, lastBreak := i, -1
	for run < len(s) {
		c, n := at(s, run)
		if c&clSpace == 0 {
			break
		}
		if c&clLineBreak != 0 {
			lastBreak = run + n
		}
		run += n
	}
	switch {
	case lastBreak >= 0: // P5: up to the last line break of the run
		return lastBreak
	case run == len(s): // P6 at the end of the text
		return run
	}
	// P6: the run but its last character, which is not followed by a
	// non-space; P7 when the run is that one character.
	_, last := utf8.DecodeLastRuneInString(s[:run])
	if run-last > i {
		return run - last
	}
	return run
}

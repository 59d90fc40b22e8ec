package toolselect

import (
	"strings"
	"unicode"
)

// maxTokenLen bounds one token: longer runs of letters are not words (a
// base64 blob in a description) and would only bloat the index.
const maxTokenLen = 40

// tokenize splits text into search terms: words are split at anything but
// letters and digits, at snake_case and kebab-case separators and at
// camelCase boundaries ("getCurrentUser" → get, current, user; "HTTPServer"
// → http, server), lowercased, stripped of common English stop words and
// reduced to a crude stem ("issues", "issued" → "issu"), so that a request
// and a tool description meet on the word rather than its form.
func tokenize(text string) []string {
	var out []string
	for _, w := range splitWords(text) {
		w = strings.ToLower(w)
		if len(w) > maxTokenLen || stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// splitWords splits at non-alphanumerics and camelCase boundaries.
func splitWords(s string) []string {
	var (
		words []string
		cur   []rune
	)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			// fooBar: a lower letter then an upper one.
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush()
			// HTTPServer: the last upper of a run starts a new word when a
			// lower letter follows it.
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			// v2 stays one word, but 2fa and letters after digits split
			// only at a letter/digit change from digits to letters.
			case unicode.IsDigit(prev) && unicode.IsLetter(r):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// stem reduces a lowercase English word to a crude stem. It only has to be
// consistent: "create", "created", "creates", "creating" all give
// "creat"; "issue", "issues" give "issu".
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = w[:len(w)-2]
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	// "running" → "runn" → "run"; "stopped" → "stopp" → "stop".
	if n := len(w); n > 3 && w[n-1] == w[n-2] && w[n-1] >= 'a' && w[n-1] <= 'z' && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// stopWords are dropped from both requests and tool texts: they carry no
// meaning for choosing a tool. "me" is kept (it names an identity tool).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the of to for in on at by with from into onto about as and or but not no nor
		is are was were be been being am do does did has have had having it its this that these those there here
		i we you he she they them their our ours your yours his her my mine us
		can could should would will shall may might must please want need like just also so then than too very
		what which who whom whose when where why how all any each every some such only own same other
		if else up down out over under again further once s t`) {
		m[w] = true
	}
	return m
}()

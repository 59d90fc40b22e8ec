package replayengine

import (
	"encoding/json"
	"github.com/agentharness/harness/replay"
	"unicode"

	"github.com/agentharness/harness"
)

// minNeedleChars is the shortest needle, in characters: shorter strings
// match by accident too often to say whether the model saw the evidence.
const minNeedleChars = 6

// Needle is a piece of evidence the agent used: a distinctive string of one
// tool result's full output that the agent later wrote in a tool-call
// argument or its own text.
type Needle struct {
	Text string `json:"text"`
	// CallID is the result the needle comes from.
	CallID string `json:"call_id"`
	// Turn and Call locate the model call that first used the needle, as
	// indexes into Recording.Turns and Turn.Calls (from 0). The request of
	// that call is where the needle must be visible.
	Turn int `json:"turn"`
	Call int `json:"call"`
}

// Needles extracts the needles of rec, in the order they are first used.
//
// Text is cut into words: maximal runs of Unicode letters, digits and
// underscores (so "src/sqlfluff/rules/L060.py" gives "src", "sqlfluff",
// "rules", "L060", "py", and "_eval_single_select" stays whole). A word
// of at least minNeedleChars characters is a candidate needle of a tool
// result when it occurs in the result's full output and nowhere earlier in
// the conversation: not in the system prompt, the tool schemas, a user
// input or its context messages, an assistant message (text or call
// arguments) or an earlier result's full output. A candidate becomes a needle when a later
// assistant message contains it as a word in a string of its call
// arguments (decoded from JSON first, so "\n" in a command is a line
// break, not the letter n), or in its own text when the word reads as
// code (identifierLike: a digit, an underscore, or an upper-case letter
// after the first character): a prose word such as "through" in the
// agent's thoughts is no evidence of what it read. The first such assistant
// message is the needle's first use; a word is a needle of one result
// only, the first that showed it.
func Needles(rec *replay.Recording) []Needle {
	seen := map[string]bool{}
	see := func(s string) { words(s, func(w string) { seen[w] = true }) }
	see(rec.System)
	for _, t := range rec.Tools {
		see(t.Name)
		see(t.Description)
		see(string(t.InputSchema))
	}
	candidates := map[string]string{} // word → call id of its result
	var out []Needle
	for ti, t := range rec.Turns {
		see(t.Input)
		for _, c := range t.Context {
			see(c.Text)
		}
		for ci, c := range t.Calls {
			use := func(w string) {
				if id, ok := candidates[w]; ok {
					out = append(out, Needle{Text: w, CallID: id, Turn: ti, Call: ci})
					delete(candidates, w)
				}
				seen[w] = true
			}
			words(c.Assistant.Text(), func(w string) {
				if identifierLike(w) {
					use(w)
				} else {
					seen[w] = true
				}
			})
			argWords(c.Assistant, use)
			for _, r := range c.Results {
				words(r.FullText(), func(w string) {
					if !seen[w] {
						candidates[w] = r.CallID
						seen[w] = true
					}
				})
				if len(r.Structured) > 0 {
					words(string(r.Structured), func(w string) {
						if !seen[w] {
							candidates[w] = r.CallID
							seen[w] = true
						}
					})
				}
			}
		}
	}
	return out
}

// argWords calls fn with the words of the strings in m's call arguments.
func argWords(m harness.Message, fn func(string)) {
	for _, tc := range m.ToolCalls {
		words(tc.Name, fn)
		var v any
		if json.Unmarshal(tc.Args, &v) != nil {
			words(string(tc.Args), fn)
			continue
		}
		jsonStrings(v, func(s string) { words(s, fn) })
	}
}

// jsonStrings calls fn with every string (keys included) of a decoded
// JSON value.
func jsonStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			jsonStrings(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			jsonStrings(e, fn)
		}
	}
}

// identifierLike reports whether a word reads as code rather than prose:
// it holds a digit or an underscore, or an upper-case letter after its
// first character (camelCase, ALLCAPS).
func identifierLike(w string) bool {
	for i, r := range w {
		if r == '_' || unicode.IsDigit(r) || (i > 0 && unicode.IsUpper(r)) {
			return true
		}
	}
	return false
}

// words calls fn with every word of s of at least minNeedleChars
// characters (see Needles for what a word is). Invalid UTF-8 bytes
// decode as U+FFFD, which is not a letter, so they end a word.
func words(s string, fn func(string)) {
	start, n := -1, 0
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, n = i, 0
			}
			n++
			continue
		}
		if start >= 0 && n >= minNeedleChars {
			fn(s[start:i])
		}
		start = -1
	}
	if start >= 0 && n >= minNeedleChars {
		fn(s[start:])
	}
}

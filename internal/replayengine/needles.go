package replayengine

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/replay"
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
// arguments) or an earlier result's full output. A candidate becomes a
// needle when a later assistant message uses it: as a word of a string of
// its call arguments (decoded from JSON first, so "\n" in a command is a
// line break, not the letter n), or of prose the agent composes — its own
// text, or an argument string that reads as prose (proseLike: a subagent's
// prompt, a file's new content), or a line of another argument string
// that does (proseLine: a to-do, a list item or comment of a file it
// writes) — when the word reads as code
// (identifierLike: a digit, an underscore, or an upper-case letter after
// the first character) or its line is quoted verbatim from the result
// (at least minQuoteChars characters). A prose word such as "through" or
// "should" that the agent writes is no evidence of what it read. The
// first such assistant message is the needle's first use; a word is a
// needle of one result only, the first that showed it.
func Needles(rec *replay.Recording) []Needle {
	n := &needleScan{seen: map[string]bool{}, candidates: map[string]string{}, texts: map[string]string{}}
	see := func(s string) { words(s, func(w string) { n.seen[w] = true }) }
	see(rec.System)
	for _, t := range rec.Tools {
		see(t.Name)
		see(t.Description)
		see(string(t.InputSchema))
	}
	for ti, t := range rec.Turns {
		see(t.Input)
		for _, c := range t.Context {
			see(c.Text)
		}
		for ci, c := range t.Calls {
			n.turn, n.call = ti, ci
			n.composed(c.Assistant.Text())
			n.args(c.Assistant)
			for _, r := range c.Results {
				n.arrive(r.CallID, r.FullText())
				if len(r.Structured) > 0 {
					n.arrive(r.CallID, string(r.Structured))
				}
			}
		}
	}
	return n.out
}

// minQuoteChars is the shortest line of composed prose that counts as a
// quote of a result: shorter lines occur verbatim by accident.
const minQuoteChars = 20

// needleScan is Needles' state as it walks a recording.
type needleScan struct {
	seen       map[string]bool
	candidates map[string]string // word → call id of the result that first showed it
	texts      map[string]string // call id → its result's full text, for quotes
	turn, call int
	out        []Needle
}

// use makes w a needle of the current call if it is a candidate.
func (n *needleScan) use(w string) {
	if id, ok := n.candidates[w]; ok {
		n.out = append(n.out, Needle{Text: w, CallID: id, Turn: n.turn, Call: n.call})
		delete(n.candidates, w)
	}
	n.seen[w] = true
}

// arrive makes the words of a result's text that nothing earlier showed
// candidates of that result.
func (n *needleScan) arrive(callID, text string) {
	n.texts[callID] += text
	words(text, func(w string) {
		if !n.seen[w] {
			n.candidates[w] = callID
			n.seen[w] = true
		}
	})
}

// composed uses the words of prose the agent wrote that read as code or
// sit in a line quoted from the result that showed them; its other words
// are seen, never needles.
func (n *needleScan) composed(s string) {
	for line := range strings.SplitSeq(s, "\n") {
		// A patch's removed and context lines quote the file after their
		// marker.
		q := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-+>"))
		words(line, func(w string) {
			id, ok := n.candidates[w]
			if identifierLike(w) || (ok && utf8.RuneCountInString(q) >= minQuoteChars && strings.Contains(n.texts[id], q)) {
				n.use(w)
				return
			}
			n.seen[w] = true
		})
	}
}

// args uses the words of m's call arguments: every word of a string that
// does not read as prose, and of one that does as composed prose.
func (n *needleScan) args(m harness.Message) {
	for _, tc := range m.ToolCalls {
		words(tc.Name, n.use)
		var v any
		if json.Unmarshal(tc.Args, &v) != nil {
			words(string(tc.Args), n.use)
			continue
		}
		jsonStrings(v, func(s string) {
			if proseLike(s) {
				n.composed(s)
				return
			}
			for line := range strings.SplitSeq(s, "\n") {
				if proseLine(line) {
					n.composed(line)
					continue
				}
				words(line, n.use)
			}
		})
	}
}

// proseLine reports whether one line of an argument string that is not
// prose as a whole reads as a sentence the agent composed: a list item,
// a comment or a paragraph of a file it writes, a to-do, a commit
// message. Its leading markup (fields without a letter or digit, such as
// "-", "//", "#", "[", "]", and a "[x]" checkbox) set aside, it has at
// least proseLineFields fields (proseItemFields after such markup: a
// list item, a comment or a to-do is short and no command), four in five
// of them words of letters that are not a command's flag, and no field
// holding code (codeField) after that markup.
func proseLine(line string) bool {
	fields := strings.Fields(line)
	lead := 0
	for lead < len(fields) && (fields[lead] == "[x]" || fields[lead] == "[X]" || !strings.ContainsFunc(fields[lead], isWordRune)) {
		lead++
	}
	fields = fields[lead:]
	if len(fields) < proseLineFields && (lead == 0 || len(fields) < proseItemFields) {
		return false
	}
	plain := 0
	for _, f := range fields {
		if codeField(f) {
			return false
		}
		if plainWord(f) && !strings.HasPrefix(f, "-") {
			plain++
		}
	}
	return plain*5 >= len(fields)*4
}

// codeField reports whether a field of a line holds a character of code
// ((){}[]<>=;$`_\\ or |). A sentence's own punctuation is not: a
// parenthesis opening or closing a field ("(no", "commits)",), and a
// comparison standing alone ("NCD > 0.3").
func codeField(f string) bool {
	if strings.Trim(f, "<>=") == "" {
		return false
	}
	inner := strings.Trim(f, sentencePunct)
	inner = strings.TrimPrefix(inner, "(")
	inner = strings.TrimSuffix(strings.TrimRight(inner, sentencePunct), ")")
	return strings.ContainsAny(inner, "(){}[]<>=;$`_\\|")
}

// sentencePunct is the punctuation a word of a sentence may carry at its
// ends: stops, quotes and apostrophes, the typographic one among them.
const sentencePunct = ".,;:!?'\"\u2019"

// proseLineFields is how many fields a line needs to read as prose, and
// proseItemFields how many after a list's, a comment's or a to-do's
// markup.
const (
	proseLineFields = 6
	proseItemFields = 3
)

// isWordRune reports whether r can be part of a word (see words).
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// proseLike reports whether an argument string reads as prose the agent
// composed rather than a command, a path or a search: at least
// proseFields whitespace-separated fields, seven in ten of them words of
// letters (with the punctuation of a sentence).
func proseLike(s string) bool {
	fields, plain := 0, 0
	for f := range strings.FieldsSeq(s) {
		fields++
		if plainWord(f) {
			plain++
		}
	}
	return fields >= proseFields && plain*10 >= fields*7
}

// proseFields is how many fields a string needs to read as prose.
const proseFields = 15

// plainWord reports whether f is letters with at most a sentence's
// punctuation around them ("Ensure", "handler,", "(optional)"); an
// apostrophe, typographic or not, may join them ("l’ordre").
func plainWord(f string) bool {
	f = strings.Trim(f, sentencePunct+"()")
	if f == "" {
		return false
	}
	for _, r := range f {
		if !unicode.IsLetter(r) && r != '-' && r != '\'' && r != '\u2019' {
			return false
		}
	}
	return true
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
		if isWordRune(r) {
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

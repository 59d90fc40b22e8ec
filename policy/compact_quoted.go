package policy

import (
	"strings"
	"unicode"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
)

// quotedWordChars is the shortest word counted as quoted: shorter ones
// (if, err, len) are in every result and tell nothing.
const quotedWordChars = 6

// quotedLines lists the lines of text (numbered from 0, as
// strings.SplitAfter with "\n" splits them, less a final empty one) that
// hold one of quoted (whole words, see quotedWords).
func quotedLines(text string, quoted map[string]bool) []int {
	if len(quoted) == 0 || text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []int
	for i, l := range lines {
		if holdsQuoted(l, quoted) {
			out = append(out, i)
		}
	}
	return out
}

// holdsQuoted reports whether line holds a word of quoted.
func holdsQuoted(line string, quoted map[string]bool) bool {
	found := false
	quotedWords(line, false, func(w string) bool {
		found = quoted[w]
		return !found
	})
	return found
}

// quotedWords calls fn with every word of s (letters, digits and
// underscores) of at least quotedWordChars characters, with identOnly
// only those that look like an identifier (an underscore, a digit or an
// inner capital), until fn returns false.
func quotedWords(s string, identOnly bool, fn func(string) bool) {
	start, n, ident := -1, 0, false
	flush := func(end int) bool {
		ok := true
		if start >= 0 && n >= quotedWordChars && (ident || !identOnly) {
			ok = fn(s[start:end])
		}
		start, n, ident = -1, 0, false
		return ok
	}
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			ident = ident || r == '_' || unicode.IsDigit(r) || (n > 0 && unicode.IsUpper(r))
			n++
			continue
		}
		if !flush(i) {
			return
		}
	}
	flush(len(s))
}

// messageWords calls fn with the identifier-like words of m's text and of
// its calls' arguments.
// In the arguments every word of quotedWordChars or more counts (a file
// or function name the agent passes on is a quote however it is spelled);
// in the text only identifier-like ones, as prose repeats prose words.
func messageWords(m *harness.Message, fn func(string) bool) {
	quotedWords(m.Text(), true, fn)
	for _, tc := range m.ToolCalls {
		quotedWords(canonjson.OrRaw(tc.Args), false, fn)
	}
}

// roundWords lists the identifier-like words of r's assistant message.
func roundWords(r *harness.Round) []string {
	var ws []string
	messageWords(&r.Assistant, func(w string) bool { ws = append(ws, w); return true })
	return ws
}

// quotedBy lists the words the agent quoted from the result at pos: the
// words (see messageWords) of the assistant messages of the rounds after
// pos up to the after-th round with results after mark, less those of
// the messages up to pos (the call that made the result names its own
// pattern or path, which every line of it may hold). A clear through mark
// keeps the results of at least that many rounds after it (after is the
// fewer of the rounds the two triggers keep), so those rounds were in the
// transcript when the clear was decided and the words are the same in
// every later view. It reads the transcript, not the view, so a summary
// or any other policy's edit of the view changes nothing.
//
// wordsOf returns those words of a round (nil: read them each time; a
// conversation's entries remember them, see resultItems.roundWords).
func quotedBy(conv *harness.Conversation, pos, mark compactPos, after int, wordsOf func(*harness.Round) []string) map[string]bool {
	if wordsOf == nil {
		wordsOf = roundWords
	}
	if conv == nil || mark.less(pos) {
		return nil
	}
	before := map[string]bool{}
	var quoted map[string]bool
	for _, t := range conv.Turns {
		if t == nil {
			continue
		}
		for _, r := range t.Rounds {
			if r == nil {
				continue
			}
			at := compactPos{t.Index, r.Index}
			if mark.less(at) {
				// Nothing past the after-th round with results: it may
				// not have been there at the clear.
				if after <= 0 {
					return quoted
				}
				if len(r.Results) > 0 {
					after--
				}
			}
			if !pos.less(at) {
				for _, w := range wordsOf(r) {
					before[w] = true
				}
				continue
			}
			for _, w := range wordsOf(r) {
				if !before[w] {
					if quoted == nil {
						quoted = map[string]bool{}
					}
					quoted[w] = true
				}
			}
		}
	}
	return quoted
}

// horizonOf is the mark up to which the transcript is read for what was
// quoted from the result at pos: the oldest recorded mark at or after pos (the clear
// that first covered it; marks only move forward, so it never changes
// once recorded), else pending, the mark being decided.
func horizonOf(conv *harness.Conversation, pos, pending compactPos) compactPos {
	h, found := compactPos{}, false
	for _, n := range conv.Notes {
		if n == nil || n.ClearTurn == 0 {
			continue
		}
		m := compactPos{n.ClearTurn, n.ClearRound}
		if !m.less(pos) && (!found || m.less(h)) {
			h, found = m, true
		}
	}
	if !found {
		return pending
	}
	return h
}

// horizon is the mark what the agent quoted from message i's result is
// read up to (see horizonOf).
func (c *compaction) horizon(i int) compactPos {
	pos, ok := c.resultPos(i)
	if !ok {
		return compactPos{}
	}
	return horizonOf(c.v.Conversation, pos, c.pending)
}

// quotedFrom lists the words the agent quoted from message i's result, read
// up to horizon (see quotedBy).
func (c *compaction) quotedFrom(i int, horizon compactPos) map[string]bool {
	pos, ok := c.resultPos(i)
	if !ok {
		return nil
	}
	var wordsOf func(*harness.Round) []string
	if c.items != nil {
		wordsOf = c.items.roundWords
	}
	return quotedBy(c.v.Conversation, pos, horizon, c.keptAfterMark(), wordsOf)
}

// keptAfterMark is how many rounds with results after its mark every
// clear keeps: the fewer of the rounds the two triggers keep. Those
// rounds were in the transcript when the clear was decided, so what is
// read of them is the same in every later view.
func (c *compaction) keptAfterMark() int {
	after := c.keepRounds
	if c.clearOld > 0 {
		after = min(after, c.clearOldKeep)
	}
	return after
}

// roundWords is roundWords(r), remembered for the conversation.
func (ri *resultItems) roundWords(r *harness.Round) []string {
	if ws, ok := ri.words[r]; ok {
		return ws
	}
	if ri.words == nil {
		ri.words = map[*harness.Round][]string{}
	}
	ws := roundWords(r)
	ri.words[r] = ws
	return ws
}

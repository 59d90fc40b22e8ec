package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// Weights of the places a [Relevant] query takes its terms from: what the
// call asked for says most about what the agent looks for, then what the
// agent last wrote, then the user's request.
const (
	relevanceWeightArgs    = 3
	relevanceWeightMessage = 2
	relevanceWeightInput   = 1
)

// relevanceQuery weighs the terms the agent is looking for: the strings in
// the call's arguments (3; the raw arguments when they are not JSON), the
// text of the assistant message that made the call (2: the agent's
// reasoning, from harness.CallInfo.Message) and the turn's input (1), from
// ctx's harness.CallInfo. A term keeps its highest weight.
//
// The message that made the call is not in the transcript yet (the agent
// appends a round once its calls are answered); when CallInfo carries no
// Message (a guard run outside an agent), the assistant message of the
// round before stands in for it.
func relevanceQuery(ctx context.Context, call *harness.ToolCall) map[string]float64 {
	q := map[string]float64{}
	add := func(text string, w float64) {
		for _, t := range relevanceTerms(text) {
			q[t] = max(q[t], w)
		}
	}
	var args any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		add(string(call.Args), relevanceWeightArgs)
	} else {
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				add(x, relevanceWeightArgs)
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(args)
	}
	info, _ := harness.CallInfoFrom(ctx)
	if info.Message != nil {
		add(info.Message.Text(), relevanceWeightMessage)
	}
	if conv := info.Transcript; conv != nil {
		for i := len(conv.Turns) - 1; i >= 0; i-- {
			t := conv.Turns[i]
			if t == nil || t.Index != info.Turn {
				continue
			}
			add(t.Input, relevanceWeightInput)
			if n := len(t.Rounds); info.Message == nil && n > 0 && t.Rounds[n-1] != nil {
				add(t.Rounds[n-1].Assistant.Text(), relevanceWeightMessage)
			}
			break
		}
	}
	return q
}

// relevanceStop are words too common in commands and prose to say what an
// agent is looking for.
var relevanceStop = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "let": true, "now": true,
	"see": true, "look": true, "check": true, "file": true, "line": true, "lines": true, "cat": true, "sed": true, "grep": true,
	"head": true, "tail": true, "echo": true, "python": true, "are": true, "was": true, "what": true, "which": true, "into": true,
	"can": true, "need": true, "how": true, "use": true, "its": true, "not": true, "but": true, "all": true, "has": true,
}

// relevanceTerms lowercases the words of s (letters, digits and
// underscores, at least 3 bytes; a word with underscores also counts its
// pieces), stop words left out. Invalid UTF-8 separates words.
func relevanceTerms(s string) []string {
	var out []string
	eachTerm([]byte(s), nil, func(t []byte) { out = append(out, string(t)) })
	return out
}

// eachTerm calls f with each term of text, as relevanceTerms lists them,
// lowercased into buf (reused; f must not keep t). Scoring calls it on
// every line of an output, so it allocates nothing once buf has grown.
func eachTerm(text, buf []byte, f func(t []byte)) []byte {
	emit := func(w []byte) {
		if len(w) >= 3 && !relevanceStop[string(w)] {
			f(w)
		}
	}
	for i := 0; i < len(text); {
		// Skip to the start of a word.
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		if !isTermRune(r, size) {
			i += size
			continue
		}
		buf = buf[:0]
		under := false
		for i < len(text) {
			r, size = rune(text[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRune(text[i:])
			}
			if !isTermRune(r, size) {
				break
			}
			switch {
			case r < utf8.RuneSelf:
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				buf = append(buf, byte(r))
				under = under || r == '_'
			default:
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
			i += size
		}
		emit(buf)
		if under {
			for _, p := range bytes.Split(buf, []byte{'_'}) {
				emit(p)
			}
		}
	}
	return buf
}

// isTermRune reports whether r (decoded from size bytes) belongs to a
// word: a letter, a digit or an underscore; an invalid byte does not.
func isTermRune(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false
	}
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

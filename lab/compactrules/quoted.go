package compactrules

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness/policy"
)

// KeepQuoted is a rule whose cleared results keep, below the placeholder,
// the lines of them the agent quoted (policy.ClearCandidate.Quoted), with
// ctx lines either side (none when ctx is negative); the placeholder says
// how to get the rest. A result none of whose lines were quoted shows the
// default placeholder, and one whose digest is no shorter than it stays
// whole. Its clears take every result.
func KeepQuoted(ctx int) policy.ClearRule {
	ctx = max(ctx, 0)
	return policy.ClearRule{Name: "quoted", Clear: func(c policy.ClearCandidate) (bool, string) {
		d := digest(c.Result.ModelText(), c.Quoted(), ctx)
		if d == "" {
			return true, ""
		}
		return true, fmt.Sprintf("[cleared to save context: %s; below are the lines of it you quoted, with %d lines of context. To see all of it, %s.]\n%s", c.About, ctx, c.Back, d)
	}}
}

// digest keeps the lines of text numbered in quoted (from 0, as
// strings.SplitAfter with "\n" splits them, less a final empty one), with
// ctx lines either side, in order; a gap between kept blocks is one "…"
// line and each block starts with the numbers of its lines (from 1). It
// returns "" when quoted names no line of text.
func digest(text string, quoted []int, ctx int) string {
	if len(quoted) == 0 || text == "" {
		return ""
	}
	ctx = max(ctx, 0)
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	keep := make([]bool, len(lines))
	found := false
	for _, i := range quoted {
		if i < 0 || i >= len(lines) {
			continue
		}
		found = true
		for j := max(0, i-ctx); j <= min(len(lines)-1, i+ctx); j++ {
			keep[j] = true
		}
	}
	if !found {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(lines); {
		if !keep[i] {
			i++
			continue
		}
		j := i
		for j < len(lines) && keep[j] {
			j++
		}
		if b.Len() > 0 {
			b.WriteString("…\n")
		}
		fmt.Fprintf(&b, "[lines %d-%d]\n", i+1, j)
		for _, l := range lines[i:j] {
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteByte('\n')
			}
		}
		i = j
	}
	return b.String()
}

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/agentharness/harness"
)

// relevanceCeiling is an idea measured as an ablation (harness+relevance):
// the ceiling and spill of ResultPolicy, with a preview that spends part
// of its budget on the lines most relevant to what the agent is looking
// for instead of on the head alone. Of the default 4 KiB preview it keeps
// the first head bytes (the headline) and the last tail bytes (the
// verdict), and fills mid bytes with the lines that best match the call's
// arguments, the agent's previous message and the turn's input (terms
// weighted 3, 2 and 1, each by its rarity among the output's lines), each
// with the line before and after it, in their order, gaps marked. The
// marker says which lines are shown and why, and where the rest is.
//
// It lives here, not as a guard.Preview, because a Preview cannot express
// it: Preview.Split sees neither the call nor the transcript (no context)
// and can only choose a prefix and a suffix.
//
// It runs inside ResultPolicy (which then finds the copy under its
// ceiling and leaves it); results that fit, and results an inner guard
// already cut, pass through.
func relevanceCeiling(limit, head, mid, tail int) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || res == nil || res.Stream != nil || res.Cut() {
				return res, err
			}
			text, ok := plainText(res.ModelParts())
			if !ok || len(text) <= limit {
				return res, nil
			}
			info, _ := harness.CallInfoFrom(ctx)
			query := relevanceQuery(info, call)
			loc, spilled := saveSpill(ctx, call, text)
			if !spilled {
				loc = "call:" + call.ID
			}
			out := relevancePreview(call.Name, text, query, loc, spilled, head, mid, tail)
			kind := harness.CutSpilled
			if !spilled {
				kind = harness.CutTruncated
			}
			setModel(res, out, harness.Cut{Kind: kind, By: "relevance", Locator: loc})
			return res, nil
		}
	}
}

func plainText(parts []harness.Part) (string, bool) {
	for _, p := range parts {
		if p.Type != harness.PartText {
			return "", false
		}
	}
	return harness.PartsText(parts), true
}

// relevanceQuery weighs the terms the agent is looking for: the call's
// argument strings (3), its previous message (2), the turn's input (1).
func relevanceQuery(info harness.CallInfo, call *harness.ToolCall) map[string]float64 {
	q := map[string]float64{}
	add := func(text string, w float64) {
		for _, t := range terms(text) {
			q[t] = max(q[t], w)
		}
	}
	var args any
	if json.Unmarshal(call.Args, &args) == nil {
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				add(x, 3)
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
	if conv := info.Transcript; conv != nil {
		for i := len(conv.Turns) - 1; i >= 0; i-- {
			t := conv.Turns[i]
			if t.Index != info.Turn {
				continue
			}
			add(t.Input, 1)
			if n := len(t.Rounds); n > 0 {
				add(t.Rounds[n-1].Assistant.Text(), 2)
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

// terms lowercases the words of s (letters, digits and underscores, at
// least 3 characters, also split at underscores), stop words left out.
func terms(s string) []string {
	var out []string
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	for _, w := range f {
		w = strings.ToLower(w)
		parts := []string{w}
		if strings.Contains(w, "_") {
			parts = append(parts, strings.Split(w, "_")...)
		}
		for _, p := range parts {
			if len(p) >= 3 && !relevanceStop[p] {
				out = append(out, p)
			}
		}
	}
	return out
}

// relevancePreview builds the model copy: head, relevant lines, tail and
// a marker, at most head+mid+tail bytes plus the marker.
func relevancePreview(tool, text string, query map[string]float64, loc string, spilled bool, head, mid, tail int) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the text ends with a line break
	}
	n := len(lines)
	// The head and tail: whole lines within their budgets.
	h, size := 0, 0
	for h < n && size+len(lines[h]) <= head {
		size += len(lines[h])
		h++
	}
	t, size := n, 0
	for t > h && size+len(lines[t-1]) <= tail {
		size += len(lines[t-1])
		t--
	}
	// Score the lines between them.
	df := map[string]int{}
	lineTerms := make([][]string, n)
	for i := h; i < t; i++ {
		seen := map[string]bool{}
		for _, w := range terms(lines[i]) {
			if query[w] > 0 && !seen[w] {
				seen[w] = true
				lineTerms[i] = append(lineTerms[i], w)
				df[w]++
			}
		}
	}
	type scored struct {
		i     int
		score float64
	}
	var cands []scored
	for i := h; i < t; i++ {
		s := 0.0
		for _, w := range lineTerms[i] {
			s += query[w] * math.Log(1+float64(n)/float64(df[w]))
		}
		if s > 0 {
			cands = append(cands, scored{i, s})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	keep := map[int]bool{}
	used := 0
	matched := map[string]bool{}
	for _, c := range cands {
		for _, j := range []int{c.i, c.i - 1, c.i + 1} {
			if j < h || j >= t || keep[j] {
				continue
			}
			if used+len(lines[j]) > mid {
				continue
			}
			keep[j] = true
			used += len(lines[j])
			if j == c.i {
				for _, w := range lineTerms[j] {
					matched[w] = true
				}
			}
		}
	}
	var b strings.Builder
	var spans [][2]int // shown lines, 0-based and inclusive, adjacent ones merged
	span := func(from, to int) {
		if k := len(spans); k > 0 && spans[k-1][1] == from-1 {
			spans[k-1][1] = to
			return
		}
		spans = append(spans, [2]int{from, to})
	}
	writeRange := func(from, to int) {
		for i := from; i < to; i++ {
			b.WriteString(lines[i])
		}
		if to > from {
			if !strings.HasSuffix(lines[to-1], "\n") {
				b.WriteByte('\n')
			}
			span(from, to-1)
		}
	}
	writeRange(0, h)
	prev := h
	for i := h; i < t; i++ {
		if !keep[i] {
			continue
		}
		start := i
		for i < t && keep[i] {
			i++
		}
		if start > prev {
			fmt.Fprintf(&b, "… (lines %d-%d not shown)\n", prev+1, start)
		}
		writeRange(start, i)
		prev = i
	}
	if t > prev {
		fmt.Fprintf(&b, "… (lines %d-%d not shown)\n", prev+1, t)
	}
	writeRange(t, n)
	var why string
	if len(matched) > 0 {
		var ws []string
		for w := range matched {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		if len(ws) > 8 {
			ws = append(ws[:8], "…")
		}
		why = " (the middle ones match: " + strings.Join(ws, ", ") + ")"
	}
	where := "Full output saved to " + loc + ": read it with read_file (offset and limit count lines) or grep it."
	if !spilled {
		where = "The full output is kept in the transcript: recall " + strings.TrimPrefix(loc, "call:") + "."
	}
	var shown []string
	for _, sp := range spans {
		if sp[0] == sp[1] {
			shown = append(shown, fmt.Sprint(sp[0]+1))
		} else {
			shown = append(shown, fmt.Sprintf("%d-%d", sp[0]+1, sp[1]+1))
		}
	}
	if len(shown) == 0 {
		shown = []string{"none"}
	}
	if len(shown) > 12 {
		shown = append(shown[:11], "…", shown[len(shown)-1])
	}
	fmt.Fprintf(&b, "[harness: %s output is %d bytes (%d lines), over the limit; shown lines %s%s. %s]",
		tool, len(text), n, strings.Join(shown, ", "), why, where)
	return b.String()
}

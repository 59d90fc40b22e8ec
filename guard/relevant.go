package guard

import (
	"bytes"
	"container/heap"
	"context"
	"math"
	"sort"

	"github.com/agentharness/harness"
)

// Default shares of a [Relevant] preview: 4 KiB in all, as [HeadTail]'s
// default, of which 1.5 KiB go to the lines that match.
const (
	defaultRelevantHead   = 1536
	defaultRelevantMiddle = 1536
	defaultRelevantTail   = 1024
)

// relevantWhy is what the marker says the picked lines were picked for.
const relevantWhy = "they contain words of your call, your previous message or the task"

// relevantCandidates bounds the matching lines a Relevant preview ranks
// (the best ones are kept), and so its memory: each becomes at most three
// spans, well under maxExcerptSpans.
const relevantCandidates = maxExcerptSpans / 4

// Relevant is a [ContextPreview] that spends part of a spilled result's
// preview on the lines the agent is most likely looking for instead of on
// the head alone. Of its budget it keeps the first Head bytes (the
// headline: a command line, a file's first lines) and the last Tail bytes
// (the verdict of a build or test log), then fills Middle bytes with the
// lines between them that best match a query: the words of the call's
// arguments (weight 3), of the agent's previous message in this turn (2)
// and of the turn's input (1), each weighted by its rarity among the
// output's lines (log(1 + lines/lines containing it)). Each picked line
// comes with the line before and after it when they fit; what the middle
// leaves unused extends the head. The lines are shown in their order, each
// gap marked with the lines it leaves out, and the marker lists the lines
// shown and the words they were picked for, with the spill path and how to
// read the rest.
//
// With nothing to match (no query words, or no line between head and tail
// containing one) it is [HeadTail]{Head: Head+Middle, Tail: Tail}, as it
// is for a streamed result whose text is not kept whole (see
// maxExcerptBytes). When the preview may use the whole ceiling
// (Window.Fill) or the budget is smaller than Head+Middle+Tail, the three
// shares are scaled to the budget.
//
// It is the default preview of [ResultPolicy] and harness run (--preview
// head-tail for the previous default); the bench's harness-no-relevance
// ablation measures what it changes.
type Relevant struct {
	// Head, Middle and Tail are the shares in bytes; all zero means the
	// defaults (1.5 KiB, 1.5 KiB, 1 KiB). Negative values count as 0.
	Head, Middle, Tail int
}

// shares returns the head, middle and tail budgets for a preview budget.
func (r Relevant) shares(budget int, fill bool) (h, m, t int) {
	h, m, t = max(r.Head, 0), max(r.Middle, 0), max(r.Tail, 0)
	if h+m+t == 0 {
		h, m, t = defaultRelevantHead, defaultRelevantMiddle, defaultRelevantTail
	}
	budget = max(budget, 0)
	if sum := int64(h) + int64(m) + int64(t); fill || sum > int64(budget) {
		h = int(int64(budget) * int64(h) / sum)
		m = int(int64(budget) * int64(m) / sum)
		t = budget - h - m
	}
	return h, m, t
}

// Split implements [Preview]: head and tail only, the middle share given
// to the head.
func (r Relevant) Split(w Window, budget int) (head, tail int) {
	h, m, t := r.shares(budget, false)
	if h+m == 0 && t == 0 {
		return 0, 0
	}
	return HeadTail{Head: h + m, Tail: max(t, 0)}.Split(w, budget)
}

// Excerpt implements [ContextPreview].
func (r Relevant) Excerpt(ctx context.Context, call *harness.ToolCall, w Window, budget int) (Excerpt, bool) {
	text := w.Head
	if budget <= 0 || call == nil || int64(len(text)) != w.Total || len(text) > maxExcerptBytes {
		return Excerpt{}, false
	}
	query := relevanceQuery(ctx, call)
	if len(query) == 0 {
		return Excerpt{}, false
	}
	h, m, t := r.shares(budget, w.Fill)
	size := h + m + t
	if size <= 0 {
		return Excerpt{}, false
	}

	headEnd, tailStart := excerptEnds(text, h, t)
	midStart, midEnd := excerptMiddle(text, headEnd, tailStart)
	cands := rankLines(text, midStart, midEnd, query)
	if len(cands) == 0 {
		return Excerpt{}, false
	}

	spans := planSpans(text, size, headEnd, tailStart, midStart, midEnd, cands)
	return Excerpt{Spans: spans, Size: size, Why: relevantWhy}, true
}

// excerptEnds returns where the head ends and the tail starts: whole lines
// within h bytes, or h raw bytes when whole lines fill less than half of
// it (a long first line). The tail alike, within t bytes.
func excerptEnds(text []byte, h, t int) (headEnd, tailStart int) {
	if h > 0 {
		headEnd = bytes.LastIndexByte(text[:min(h, len(text))], '\n') + 1
		if headEnd < h/2 {
			headEnd = min(h, len(text))
		}
	}
	tailStart = len(text)
	if t > 0 && len(text) > headEnd {
		from := max(len(text)-t, headEnd)
		tailStart = from
		if from > 0 && text[from-1] != '\n' {
			if i := bytes.IndexByte(text[from:], '\n'); i >= 0 && len(text)-(from+i+1) >= t/2 {
				tailStart = from + i + 1
			}
		}
	}
	return headEnd, tailStart
}

// excerptMiddle returns the lines wholly between the head and the tail.
func excerptMiddle(text []byte, headEnd, tailStart int) (midStart, midEnd int) {
	midStart = headEnd
	if midStart > 0 && text[midStart-1] != '\n' {
		if i := bytes.IndexByte(text[midStart:], '\n'); i >= 0 {
			midStart += i + 1
		} else {
			midStart = len(text)
		}
	}
	midEnd = tailStart
	if midEnd < len(text) && midEnd > 0 && text[midEnd-1] != '\n' {
		midEnd = bytes.LastIndexByte(text[:midEnd], '\n') + 1
	}
	return midStart, midEnd
}

// planSpans fits the head, the tail and the ranked middle lines (each with
// the line before and after it) into size bytes, in that order of priority;
// what the middle leaves unused extends the head, line by line, as one
// span (the plan's cost depends only on what is covered).
func planSpans(text []byte, size, headEnd, tailStart, midStart, midEnd int, cands []lineScore) []Span {
	plan := newExcerptPlan(text, size)
	var spans []Span
	add := func(s, e int, reasons []string) {
		if plan.add(s, e, reasons) {
			spans = append(spans, Span{Start: s, End: e, Reasons: reasons})
		}
	}
	if headEnd > 0 {
		add(0, headEnd, nil)
	}
	if tailStart < len(text) {
		add(tailStart, len(text), nil)
	}
	for _, c := range cands {
		add(c.start, c.end, c.terms)
		if c.start > midStart {
			add(bytes.LastIndexByte(text[:c.start-1], '\n')+1, c.start, nil)
		}
		if c.end < midEnd {
			add(c.end, lineEnd(text, c.end, midEnd), nil)
		}
	}
	if headEnd == midStart {
		ext := headEnd
		for ext < midEnd {
			next := lineEnd(text, ext, midEnd)
			if !plan.add(ext, next, nil) {
				break
			}
			ext = next
		}
		if ext > headEnd {
			spans = append(spans, Span{Start: headEnd, End: ext})
		}
	}
	return spans
}

// lineEnd is the end of the line starting at p (after its line break), at
// most limit.
func lineEnd(text []byte, p, limit int) int {
	if i := bytes.IndexByte(text[p:limit], '\n'); i >= 0 {
		return p + i + 1
	}
	return limit
}

// lineScore is a line of the middle that matches the query.
type lineScore struct {
	start, end int
	score      float64
	terms      []string // the query terms it contains, most weight first
}

// rankLines scores the lines in text[from:to] against query and returns
// the best relevantCandidates of those that match, best first (ties: the
// earlier line). Two passes — line counts per term, then scores — keep
// its memory to the candidates.
func rankLines(text []byte, from, to int, query map[string]float64) []lineScore {
	if from >= to {
		return nil
	}
	lines := float64(bytes.Count(text, []byte{'\n'}) + 1)
	df := map[string]int{}
	m := &matcher{query: query}
	eachLine(text, from, to, func(s, e int) {
		for _, w := range m.distinct(text[s:e]) {
			df[w]++
		}
	})
	if len(df) == 0 {
		return nil
	}
	h := &lineHeap{}
	eachLine(text, from, to, func(s, e int) {
		ws := m.distinct(text[s:e])
		if len(ws) == 0 {
			return
		}
		score := 0.0
		weight := make(map[string]float64, len(ws))
		for _, w := range ws {
			weight[w] = query[w] * math.Log(1+lines/float64(df[w]))
			score += weight[w]
		}
		c := lineScore{start: s, end: e, score: score}
		if h.Len() == relevantCandidates {
			if !better(c, (*h)[0]) {
				return
			}
			heap.Pop(h)
		}
		sort.Slice(ws, func(i, j int) bool {
			if weight[ws[i]] != weight[ws[j]] {
				return weight[ws[i]] > weight[ws[j]]
			}
			return ws[i] < ws[j]
		})
		c.terms = append([]string(nil), ws...)
		heap.Push(h, c)
	})
	out := []lineScore(*h)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// better orders candidates: higher score, then the earlier line.
func better(a, b lineScore) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.start < b.start
}

// eachLine calls f with the bounds of each line of text[from:to].
func eachLine(text []byte, from, to int, f func(s, e int)) {
	for p := from; p < to; {
		e := lineEnd(text, p, to)
		f(p, e)
		p = e
	}
}

// matcher finds the query terms in lines, reusing its buffers.
type matcher struct {
	query map[string]float64
	buf   []byte
	found []string
}

// distinct lists the query terms line contains, once each; the slice is
// reused by the next call.
func (m *matcher) distinct(line []byte) []string {
	m.found = m.found[:0]
	m.buf = eachTerm(line, m.buf, func(t []byte) {
		if m.query[string(t)] > 0 && !containsTerm(m.found, t) {
			m.found = append(m.found, string(t))
		}
	})
	return m.found
}

func containsTerm(s []string, t []byte) bool {
	for _, x := range s {
		if x == string(t) {
			return true
		}
	}
	return false
}

// lineHeap is a min-heap of candidates: the worst on top, to be replaced.
type lineHeap []lineScore

func (h lineHeap) Len() int           { return len(h) }
func (h lineHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h lineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)        { *h = append(*h, x.(lineScore)) }
func (h *lineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

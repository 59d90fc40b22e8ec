package guard

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// This file is the guard's side of a [ContextPreview]: it takes the spans
// an Excerpt proposes while they fit (excerptPlan), renders them in text
// order with a line marking each gap, and describes them in the marker.
// [Relevant] plans with the same excerptPlan, so what it proposes is what
// the guard keeps.

// Caps on what an excerpt adds to a marker; bound() reserves room for
// them before the excerpt is chosen.
const (
	excerptWhyMax        = 160 // Excerpt.Why in the full marker
	excerptReasonsMax    = 100 // the reasons listed in the full marker
	excerptReasonsShort  = 40  // ... and in the short one
	excerptRangesFull    = 8   // line ranges listed in the full marker
	excerptRangesShort   = 3   // ... and in the short one
	lineIndexBlock       = 256
	excerptReasonWordMax = 40 // one reason
)

// lineIndex answers "which line holds byte p" in O(256) without a slice
// of every line: it keeps the line-break count at every 256 bytes (a
// 4 MiB text: 128 KiB of counts).
type lineIndex struct {
	text []byte
	cp   []int // cp[k]: '\n' bytes in text[:k*lineIndexBlock]
}

func newLineIndex(text []byte) *lineIndex {
	ix := &lineIndex{text: text, cp: make([]int, 0, len(text)/lineIndexBlock+1)}
	n := 0
	for k := 0; k*lineIndexBlock <= len(text); k++ {
		ix.cp = append(ix.cp, n)
		end := min((k+1)*lineIndexBlock, len(text))
		n += bytes.Count(text[k*lineIndexBlock:end], []byte{'\n'})
	}
	return ix
}

// line is the 1-based line of byte p (p == len(text) is on the last line).
func (ix *lineIndex) line(p int) int {
	k := p / lineIndexBlock
	return 1 + ix.cp[k] + bytes.Count(ix.text[k*lineIndexBlock:p], []byte{'\n'})
}

// planSpan is a kept range of the text: [start, end), both on rune starts,
// and its size once invalid UTF-8 is replaced.
type planSpan struct {
	start, end, size int
}

// excerptPlan keeps spans while the rendered pieces — the spans'
// sanitised text and one line per gap — fit in budget. cost is always the
// exact size of that rendering (give or take one line break the marker
// makes unnecessary), so the ceiling holds whatever is proposed.
type excerptPlan struct {
	text    []byte
	lines   *lineIndex
	budget  int
	spans   []planSpan // sorted, disjoint, not adjacent
	cost    int
	reasons []string // of the spans kept, first kept first, distinct
	seen    map[string]bool
	scratch []byte
}

func newExcerptPlan(text []byte, budget int) *excerptPlan {
	p := &excerptPlan{text: text, lines: newLineIndex(text), budget: budget, seen: map[string]bool{}}
	p.cost = p.gapCost(-1, len(text), false)
	return p
}

// snap moves a range's ends onto rune starts: a rune is never cut.
func (p *excerptPlan) snap(s, e int) (int, int) {
	n := len(p.text)
	s, e = max(0, min(s, n)), max(0, min(e, n))
	for k := 0; k < utf8.UTFMax-1 && s < n && !utf8.RuneStart(p.text[s]); k++ {
		s++
	}
	for k := 0; k < utf8.UTFMax-1 && e > s && e < n && !utf8.RuneStart(p.text[e]); k++ {
		e--
	}
	return s, e
}

// sanitizedLen is the size of b with each invalid byte replaced by U+FFFD.
// It is additive over pieces cut at rune starts, which is how the plan
// sizes a merge without reading the merged text again.
func sanitizedLen(b []byte) int {
	if utf8.Valid(b) {
		return len(b)
	}
	n := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			n += replacementLen
		} else {
			n += size
		}
		i += size
	}
	return n
}

// appendGap appends the line that stands for the bytes [from, to) not
// shown: "… (lines 41-111 not shown, 5120 bytes)\n", or "… (5120 bytes of
// lines 41-111 not shown)\n" when the gap starts or ends inside a line.
func (p *excerptPlan) appendGap(dst []byte, from, to int) []byte {
	a, b := p.lines.line(from), p.lines.line(to-1)
	whole := (from == 0 || p.text[from-1] == '\n') && (to == len(p.text) || p.text[to-1] == '\n')
	dst = append(dst, "… ("...)
	if !whole {
		dst = strconv.AppendInt(dst, int64(to-from), 10)
		dst = append(dst, " bytes of "...)
	}
	if b > a {
		dst = append(dst, "lines "...)
		dst = strconv.AppendInt(dst, int64(a), 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, int64(b), 10)
	} else {
		dst = append(dst, "line "...)
		dst = strconv.AppendInt(dst, int64(a), 10)
	}
	dst = append(dst, " not shown"...)
	if whole {
		dst = append(dst, ", "...)
		dst = strconv.AppendInt(dst, int64(to-from), 10)
		dst = append(dst, " bytes"...)
	}
	return append(dst, ")\n"...)
}

// gapCost is the size of the gap line for [from, to): nothing when the
// range is empty, one more byte when it follows a span that does not end
// a line (afterSpan; prevEnd is that span's end, -1 for the text's start).
func (p *excerptPlan) gapCost(prevEnd, to int, afterSpan bool) int {
	from := max(prevEnd, 0)
	if from >= to {
		return 0
	}
	p.scratch = p.appendGap(p.scratch[:0], from, to)
	n := len(p.scratch)
	if afterSpan && p.text[from-1] != '\n' {
		n++
	}
	return n
}

// add keeps [s, e) when the rendering still fits, merging it with the
// spans it overlaps or touches, and reports whether it did.
func (p *excerptPlan) add(s, e int, reasons []string) bool {
	s, e = p.snap(s, e)
	if s >= e {
		return false
	}
	// spans[i:j] overlap or touch [s, e).
	i := sort0(len(p.spans), func(k int) bool { return p.spans[k].end >= s })
	j := sort0(len(p.spans), func(k int) bool { return p.spans[k].start > e })
	prevEnd, afterSpan := -1, false
	if i > 0 {
		prevEnd, afterSpan = p.spans[i-1].end, true
	}
	nextStart := len(p.text)
	if j < len(p.spans) {
		nextStart = p.spans[j].start
	}
	merged := planSpan{start: s, end: e}
	old := 0
	if i == j {
		old = p.gapCost(prevEnd, nextStart, afterSpan)
		merged.size = sanitizedLen(p.text[s:e])
	} else {
		merged.start, merged.end = min(s, p.spans[i].start), max(e, p.spans[j-1].end)
		old = p.gapCost(prevEnd, p.spans[i].start, afterSpan)
		for k := i; k < j; k++ {
			old += p.spans[k].size
			merged.size += p.spans[k].size
			next := nextStart
			if k+1 < j {
				next = p.spans[k+1].start
			}
			old += p.gapCost(p.spans[k].end, next, true)
			// The text between kept spans that the merge now covers.
			if k+1 < j {
				merged.size += sanitizedLen(p.text[p.spans[k].end:p.spans[k+1].start])
			}
		}
		if merged.start < p.spans[i].start {
			merged.size += sanitizedLen(p.text[merged.start:p.spans[i].start])
		}
		if merged.end > p.spans[j-1].end {
			merged.size += sanitizedLen(p.text[p.spans[j-1].end:merged.end])
		}
	}
	cost := p.cost - old + p.gapCost(prevEnd, merged.start, afterSpan) + merged.size + p.gapCost(merged.end, nextStart, true)
	if cost > p.budget {
		return false
	}
	p.cost = cost
	p.spans = slices.Replace(p.spans, i, j, merged)
	for _, r := range reasons {
		if r != "" && !p.seen[r] {
			p.seen[r] = true
			p.reasons = append(p.reasons, r)
		}
	}
	return true
}

// sort0 is the smallest k in [0, n) with f(k) true, or n (f monotone).
func sort0(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// excerptShown is what the marker says about an excerpt: the line ranges
// shown, why the picked ones were picked.
type excerptShown struct {
	ranges  [][2]int64
	count   int64 // len(ranges), or more for a probe
	reasons []string
	why     string
	// probe makes the bound render the longest wording: every range list
	// at its cap, reasons and why at their longest.
	probe bool
}

// rangesText lists line ranges, at most max of them ("1-40, 112-114, …
// (5 more), 1190-1200"); count is how many there are (len(rs) but for a
// probe).
func rangesText(rs [][2]int64, count int64, max int) string {
	one := func(r [2]int64) string {
		if r[0] == r[1] {
			return fmtInt(r[0])
		}
		return fmtInt(r[0]) + "-" + fmtInt(r[1])
	}
	var parts []string
	if count <= int64(max) {
		for _, r := range rs {
			parts = append(parts, one(r))
		}
		return strings.Join(parts, ", ")
	}
	for _, r := range rs[:max-1] {
		parts = append(parts, one(r))
	}
	parts = append(parts, "… ("+fmtInt(count-int64(max))+" more)", one(rs[len(rs)-1]))
	return strings.Join(parts, ", ")
}

// reasonsText joins reasons while they fit in n bytes, "…" ending a list
// that was cut.
func reasonsText(rs []string, n int) string {
	var b strings.Builder
	for i, r := range rs {
		r = markerSafe(r, excerptReasonWordMax)
		sep := ""
		if i > 0 {
			sep = ", "
		}
		if b.Len()+len(sep)+len(r) > n-len(", …") {
			b.WriteString(sep + "…")
			break
		}
		b.WriteString(sep + r)
	}
	return b.String()
}

// full is the "Shown here" sentence of the full marker.
func (x *excerptShown) full(m *cutMarker) string {
	ranges := rangesText(x.ranges, x.count, excerptRangesFull)
	reasons := reasonsText(x.reasons, excerptReasonsMax)
	why := markerSafe(x.why, excerptWhyMax)
	if x.probe {
		reasons, why = strings.Repeat("r", excerptReasonsMax), strings.Repeat("w", excerptWhyMax)
	}
	omitted := max(m.total-m.head, 0)
	if x.probe {
		omitted = m.head // the largest number
	}
	s := "Shown here: lines " + ranges + " (" + fmtInt(m.head) + " bytes)"
	if reasons != "" {
		if why == "" {
			why = "the preview chose them"
		}
		s += ", some picked because " + why + " (" + reasons + ")"
	}
	return s + ". The other " + fmtInt(omitted) + " bytes are omitted, each gap marked by a line \"… (lines a-b not shown)\"."
}

// short is the "showing" clause of the short marker.
func (x *excerptShown) short() string {
	s := "showing lines " + rangesText(x.ranges, x.count, excerptRangesShort)
	reasons := reasonsText(x.reasons, excerptReasonsShort)
	if x.probe {
		reasons = strings.Repeat("r", excerptReasonsShort)
	}
	if reasons != "" {
		s += " (picked for: " + reasons + ")"
	}
	return s
}

// boundExcerpt is the longest marker a tier can render for an excerpt of
// this result, whatever the excerpt turns out to be.
func (m *cutMarker) boundExcerpt(tier int) int {
	big := max(m.size, m.total, m.lines, int64(m.limit))
	probe := *m
	probe.head, probe.tail = big, 0
	// The longest list: every listed range at the largest number, and a
	// count of ranges so large that "… (N more)" takes the most digits.
	rs := make([][2]int64, excerptRangesFull)
	for i := range rs {
		rs[i] = [2]int64{big, big}
	}
	probe.excerpt = &excerptShown{ranges: rs, count: big + int64(excerptRangesFull), probe: true}
	return len(probe.renderAs(tier, shownExcerpt))
}

// renderPreview makes the model copy of an oversized payload: an excerpt
// when the guard's Preview is a ContextPreview and the whole text (at most
// maxExcerptBytes) is at hand, else the Split head and tail.
func (g *resultGuard) renderPreview(ctx context.Context, call *harness.ToolCall, src previewSource, whole bool, m cutMarker, limit int, fill bool) string {
	if cp, ok := g.preview.(ContextPreview); ok && whole && src.total <= maxExcerptBytes {
		if out, ok := renderExcerpt(ctx, call, cp, src.head, m, limit, fill); ok {
			return out
		}
	}
	out, _ := renderCut(src, m, limit, g.preview, fill)
	return out
}

// renderExcerpt builds a model copy of at most limit bytes from the spans
// cp proposes: the first span (when the text starts with it), the marker,
// then the other spans in text order with a line for each gap. It reports
// false when cp declines or nothing it proposes fits; the caller then
// splits head and tail.
func renderExcerpt(ctx context.Context, call *harness.ToolCall, cp ContextPreview, text []byte, m cutMarker, limit int, fill bool) (string, bool) {
	m.total = int64(len(text))
	m.lines = int64(bytes.Count(text, []byte{'\n'}))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		m.lines++
	}
	tier := markerTierFull
	switch {
	case m.boundExcerpt(markerTierFull)+2*len(markerSep) <= limit/3:
	case m.boundExcerpt(markerTierShort)+2*len(markerSep) <= limit:
		tier = markerTierShort
	default:
		return "", false
	}
	budget := limit - m.boundExcerpt(tier) - 2*len(markerSep)
	ex, ok := cp.Excerpt(ctx, call, Window{Head: text, Tail: text, Total: int64(len(text)), Fill: fill}, budget)
	if !ok || len(ex.Spans) == 0 {
		return "", false
	}
	size := ex.Size
	if size <= 0 || size > budget {
		size = budget
	}
	plan := newExcerptPlan(text, size)
	for _, s := range ex.Spans[:min(len(ex.Spans), maxExcerptSpans)] {
		plan.add(s.Start, s.End, s.Reasons)
	}
	if len(plan.spans) == 0 {
		return "", false
	}
	shown := &excerptShown{reasons: plan.reasons, why: ex.Why, count: int64(len(plan.spans))}
	var raw int64
	for _, s := range plan.spans {
		raw += int64(s.end - s.start)
		shown.ranges = append(shown.ranges, [2]int64{int64(plan.lines.line(s.start)), int64(plan.lines.line(s.end - 1))})
	}
	m.head, m.tail, m.excerpt = raw, 0, shown
	marker := m.renderAs(tier, shownExcerpt)

	var b strings.Builder
	b.Grow(plan.cost + len(marker) + 2*len(markerSep))
	rest := plan.spans
	prevEnd, afterSpan := -1, false
	if first := plan.spans[0]; first.start == 0 {
		b.WriteString(sanitized(text[first.start:first.end]))
		b.WriteString(markerSep)
		rest, prevEnd = rest[1:], first.end
	}
	b.WriteString(marker)
	b.WriteString(markerSep)
	n := b.Len()
	for _, s := range rest {
		writeGap(&b, plan, prevEnd, s.start, afterSpan)
		b.WriteString(sanitized(text[s.start:s.end]))
		prevEnd, afterSpan = s.end, true
	}
	writeGap(&b, plan, prevEnd, len(text), afterSpan)
	out := b.String()
	if b.Len() == n {
		out = out[:n-len(markerSep)] // nothing after the marker
	}
	if len(out) > limit {
		// Unreachable: the plan counts every byte and bound every
		// number; kept so that the ceiling holds even if that breaks.
		return "", false
	}
	return out, true
}

// writeGap writes the gap line for [max(prevEnd,0), to), after a line
// break when it follows a span that does not end a line.
func writeGap(b *strings.Builder, p *excerptPlan, prevEnd, to int, afterSpan bool) {
	from := max(prevEnd, 0)
	if from >= to {
		return
	}
	if afterSpan && p.text[from-1] != '\n' {
		b.WriteByte('\n')
	}
	p.scratch = p.appendGap(p.scratch[:0], from, to)
	b.Write(p.scratch)
}

// sanitized is b with each invalid byte replaced by U+FFFD (as validHead
// does: one replacement per byte, which sanitizedLen counts).
func sanitized(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, sanitizedLen(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, string(utf8.RuneError)...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

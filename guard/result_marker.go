package guard

import (
	"bytes"
	"strconv"
	"strings"
)

// cutMode says why a result's model copy is a preview.
type cutMode int

const (
	// modeSpilled: the full payload is in a spill file the model can page.
	modeSpilled cutMode = iota
	// modeTruncated: the spill was off or failed; the transcript keeps the
	// full payload.
	modeTruncated
	// modeLost: a stream could not be spilled and was longer than the
	// guard keeps in memory; the omitted middle is kept nowhere.
	modeLost
	// modePage: the result is a page of a spill file; it is not spilled
	// again.
	modePage
)

// Marker tiers, from the fullest to the last one that still names the
// locator; the guard picks the fullest that leaves the preview room.
const (
	markerTierFull = iota
	markerTierShort
	markerTierMinimal
)

// markerSep separates the preview pieces from the marker; two on each side
// are reserved in every budget.
const markerSep = "\n\n"

// cutMarker holds what a marker says. The numbers about the preview are
// filled in after the split; before it, bound() measures the longest text
// the marker can take.
type cutMarker struct {
	mode   cutMode
	tool   string
	size   int64 // payload bytes, as the model would be sent them
	limit  int   // the ceiling
	path   string
	hint   string
	reason string // why the result was not spilled
	images int    // image parts not shown
	// failure is the error a stream ended with, if it failed.
	failure string

	// Of the source the preview is taken from (the spill file's text).
	total, lines int64
	// Of the preview.
	head, tail         int64 // raw source bytes shown from each end
	headLine, tailLine int64
	// gapLine is the line of the first byte not shown after the head.
	gapLine int64
	// excerpt, for a ContextPreview's excerpt (shown as shownExcerpt),
	// says which lines are shown and why; head then counts every byte
	// shown.
	excerpt *excerptShown
}

// shownKind tells which pieces a preview has.
type shownKind int

const (
	shownBoth shownKind = iota
	shownHead
	shownTail
	shownNone
	shownAll
	// shownExcerpt: spans chosen by a ContextPreview (m.excerpt).
	shownExcerpt
)

func (m *cutMarker) shown() shownKind {
	switch {
	case m.head+m.tail >= m.total && m.total > 0:
		return shownAll
	case m.head > 0 && m.tail > 0:
		return shownBoth
	case m.head > 0:
		return shownHead
	case m.tail > 0:
		return shownTail
	}
	return shownNone
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// render returns the marker of a tier for the pieces in m.
func (m *cutMarker) render(tier int) string {
	return m.renderAs(tier, m.shown())
}

// renderAs returns the marker of a tier as if the preview held the pieces
// k says, so that bound() can measure every tier before the split.
func (m *cutMarker) renderAs(tier int, k shownKind) string {
	switch tier {
	case markerTierFull:
		return m.renderFull(k)
	case markerTierShort:
		return m.renderShort(k)
	}
	return m.renderMinimal()
}

// toolName names the tool in a marker: its name, or "the tool" for a
// result whose call its request does not carry (a Responses request that
// continues a stored response by previous_response_id sends only the
// outputs).
func (m *cutMarker) toolName() string {
	if m.tool == "" {
		return "the tool"
	}
	return m.tool
}

// renderFull is the full marker: what was returned, where it was saved,
// which pieces are shown, and how to read the rest.
func (m *cutMarker) renderFull(k shownKind) string {
	var b strings.Builder
	b.WriteString("[harness: ")
	if m.mode == modePage {
		b.WriteString("this read of " + m.path)
	} else {
		b.WriteString(m.toolName())
	}
	b.WriteString(" returned " + fmtInt(m.size) + " bytes, more than the " + fmtInt(int64(m.limit)) + "-byte limit for one result")
	switch m.mode {
	case modeSpilled:
		b.WriteString(", so the whole result was saved to " + m.path)
		if m.lines > 1 {
			b.WriteString(" (" + fmtInt(m.lines) + " lines)")
		}
		b.WriteString(". ")
	case modePage:
		b.WriteString(". It is a spill file already, so it was not saved again. ")
	default:
		b.WriteString(". ")
	}
	b.WriteString(m.fullShown(k))
	if m.images > 0 {
		b.WriteString(" " + fmtInt(int64(m.images)) + " image(s) are not shown.")
	}
	if m.failure != "" {
		b.WriteString(" The tool's output stream failed (" + m.failure + ").")
	}
	b.WriteString(m.fullHowToRead(k))
	b.WriteString("]")
	return b.String()
}

// fullShown is the full marker's sentence on the pieces shown.
func (m *cutMarker) fullShown(k shownKind) string {
	omitted := max(m.total-m.head-m.tail, 0)
	start := "the first " + fmtInt(m.head) + " bytes"
	end := "the last " + fmtInt(m.tail) + " bytes"
	if m.lines > 1 {
		start = "the start up to line " + fmtInt(m.headLine) + " (" + fmtInt(m.head) + " bytes)"
		end = "the end from line " + fmtInt(m.tailLine) + " (" + fmtInt(m.tail) + " bytes)"
	}
	switch k {
	case shownBoth:
		return "Shown here: " + start + " and " + end + "; the " + fmtInt(omitted) + " bytes in between are omitted."
	case shownHead:
		return "Shown here: " + start + "; the remaining " + fmtInt(omitted) + " bytes are omitted."
	case shownTail:
		return "Shown here: " + end + "; the first " + fmtInt(omitted) + " bytes are omitted."
	case shownNone:
		return "None of it fits here."
	case shownAll:
		return "Shown here: all " + fmtInt(m.head+m.tail) + " bytes of its text."
	case shownExcerpt:
		return m.excerpt.full(m)
	}
	return ""
}

// fullHowToRead is the full marker's closing: where the rest is and how
// to read it, or why it cannot be read back.
func (m *cutMarker) fullHowToRead(k shownKind) string {
	switch m.mode {
	case modeSpilled:
		gap := ""
		if m.lines > 1 && (k == shownBoth || k == shownHead) {
			gap = " The omitted part starts at line " + fmtInt(m.gapLine) + "."
		}
		return gap + " " + m.hint
	case modeTruncated:
		return " The full result is kept in the transcript only (" + m.reason + "); it cannot be read back from here, so narrow the request (a smaller range, a filter) to see the omitted part."
	case modeLost:
		return " The output was streamed and could not be saved (" + m.reason + "): the omitted bytes are not kept anywhere; narrow the request to see them."
	case modePage:
		return " Read a smaller range: read_file on " + m.path + " with a smaller limit (lines), or grep on that path."
	}
	return ""
}

// renderShort is the short marker: sizes, the pieces shown and the
// locator, for ceilings too small for the full one.
func (m *cutMarker) renderShort(k shownKind) string {
	var b strings.Builder
	b.WriteString("[harness: ")
	if m.mode == modePage {
		b.WriteString("this page of " + m.path + " is ")
	} else {
		b.WriteString(m.toolName() + " ")
	}
	b.WriteString(fmtInt(m.size) + " B, over the " + fmtInt(int64(m.limit)) + " B limit; ")
	switch k {
	case shownBoth:
		b.WriteString("showing the first " + fmtInt(m.head) + " B and the last " + fmtInt(m.tail) + " B")
	case shownHead:
		b.WriteString("showing the first " + fmtInt(m.head) + " B")
	case shownTail:
		b.WriteString("showing the last " + fmtInt(m.tail) + " B")
	case shownNone:
		b.WriteString("nothing shown")
	case shownAll:
		b.WriteString("showing all " + fmtInt(m.head+m.tail) + " B of text")
	case shownExcerpt:
		b.WriteString(m.excerpt.short())
	}
	switch m.mode {
	case modeSpilled:
		b.WriteString("; full result: " + m.path + " (read_file offset/limit in lines, grep)]")
	case modeTruncated:
		b.WriteString("; the rest is in the transcript only]")
	case modeLost:
		b.WriteString("; the rest was not kept]")
	case modePage:
		b.WriteString("; read fewer lines]")
	}
	return b.String()
}

// renderMinimal is the last marker that still names the locator.
func (m *cutMarker) renderMinimal() string {
	rest := map[cutMode]string{modeSpilled: "full: " + m.path + "]", modeTruncated: "rest in transcript]",
		modeLost: "rest lost]", modePage: "read fewer lines]"}
	return "[cut " + fmtInt(m.size) + " B; " + rest[m.mode]
}

// bound is the longest marker a tier can render for this result, whatever
// the preview turns out to be: every number set to the largest value any of
// them can take, every wording of the preview tried.
func (m *cutMarker) bound(tier int) int {
	big := max(m.size, m.total, m.lines, int64(m.limit))
	probe := *m
	probe.head, probe.tail, probe.headLine, probe.tailLine, probe.gapLine = big, big, big, big, big
	n := 0
	for k := shownBoth; k <= shownAll; k++ {
		n = max(n, len(probe.renderAs(tier, k)))
	}
	return n
}

// previewSource is the text a preview is taken from: the spill file's
// content (or, when nothing was spilled, the text the model would be
// sent). For a stream only its first and last bytes are at hand.
type previewSource struct {
	head, tail []byte
	total      int64
	newlines   int64 // '\n' bytes in the whole source
}

func previewSourceOf(text []byte) previewSource {
	return previewSource{head: text, tail: text, total: int64(len(text)), newlines: int64(bytes.Count(text, []byte{'\n'}))}
}

// lineCount is the number of lines of the source; a last line without a
// line break counts.
func (s previewSource) lineCount() int64 {
	n := s.newlines
	if s.total > 0 && len(s.tail) > 0 && s.tail[len(s.tail)-1] != '\n' {
		n++
	}
	return n
}

// renderCut builds a model copy of at most limit bytes: a preview chosen by
// pv from src around a marker. It returns the text and the raw source bytes
// the preview shows.
func renderCut(src previewSource, m cutMarker, limit int, pv Preview, fill bool) (string, int64) {
	m.total, m.lines = src.total, src.lineCount()
	// The full marker when it leaves two thirds of the ceiling to the
	// preview; else the short one whenever it fits at all, since it still
	// says everything the model needs (tool, sizes, shown, where the rest
	// is and how to read it); the minimal one only when nothing else fits.
	tier := markerTierFull
	switch {
	case m.bound(markerTierFull)+2*len(markerSep) <= limit/3:
	case m.bound(markerTierShort)+2*len(markerSep) <= limit:
		tier = markerTierShort
	default:
		tier = markerTierMinimal
	}
	reserve := m.bound(tier) + 2*len(markerSep)
	if reserve > limit {
		// Not even the shortest marker leaves room for a preview.
		return validPrefix(m.render(markerTierMinimal), limit), 0
	}
	budget := limit - reserve
	h, t := pv.Split(Window{Head: src.head, Tail: src.tail, Total: src.total, Fill: fill}, budget)
	h = max(0, min(h, len(src.head), budget))
	t = max(0, min(t, len(src.tail), budget-h))
	if int64(h)+int64(t) > src.total {
		t = int(src.total) - h
	}
	headText, hRaw := validHead(src.head, h)
	tailText, tRaw := validTail(src.tail, t)
	m.head, m.tail = int64(hRaw), int64(tRaw)
	if hRaw > 0 {
		m.headLine = 1 + int64(bytes.Count(src.head[:hRaw-1], []byte{'\n'}))
		m.gapLine = m.headLine
		if src.head[hRaw-1] == '\n' {
			m.gapLine++
		}
	}
	if tRaw > 0 {
		m.tailLine = 1 + src.newlines - int64(bytes.Count(src.tail[len(src.tail)-tRaw:], []byte{'\n'}))
	}
	marker := m.render(tier)
	var b strings.Builder
	b.Grow(len(headText) + len(tailText) + len(marker) + 2*len(markerSep))
	if headText != "" {
		b.WriteString(headText)
		b.WriteString(markerSep)
	}
	b.WriteString(marker)
	if tailText != "" {
		b.WriteString(markerSep)
		b.WriteString(tailText)
	}
	out := b.String()
	if len(out) > limit {
		// Unreachable by construction (bound covers every number); kept
		// so that the ceiling holds even if a wording change breaks it.
		return validPrefix(m.render(markerTierMinimal), limit), 0
	}
	return out, int64(hRaw + tRaw)
}

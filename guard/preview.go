package guard

import (
	"bytes"
	"context"

	"github.com/agentharness/harness"
)

// Default preview of a spilled result: the start carries the headline (a
// command line, a file's first lines, a JSON envelope), the end carries the
// verdict (the last lines of a build or test log).
const (
	defaultPreviewHead = 3 << 10
	defaultPreviewTail = 1 << 10
)

// Window is what a [Preview] chooses from: the first and the last bytes of
// an oversized payload. When the payload is held in memory, Head and Tail
// are both the whole payload; for a stream they are its first and last
// bytes and the middle is no longer at hand.
type Window struct {
	// Head holds the payload's first bytes and Tail its last bytes.
	Head, Tail []byte
	// Total is the payload's size in bytes.
	Total int64
	// Fill is set when nothing beyond the preview can be read back (the
	// spill was off or failed, or the payload is a page of a spill file):
	// the preview should then use its whole budget.
	Fill bool
}

// Preview decides which bytes of an oversized payload the model is shown:
// a prefix and a suffix. Implementations only choose; the guard enforces
// the bounds (head ≤ len(w.Head), tail ≤ len(w.Tail), head+tail ≤ budget),
// moves both cuts to UTF-8 boundaries and replaces invalid UTF-8, so a
// Preview cannot break the ceiling. It is an interface so that other
// strategies (head only, tail only, line-aware) can be measured against the
// default [HeadTail].
type Preview interface {
	Split(w Window, budget int) (head, tail int)
}

// maxExcerptBytes bounds the text a [ContextPreview] is asked about: the
// relevance pass reads the whole text (twice), so it runs only when the
// whole text is at hand and at most this big. A result held in memory is
// at hand whatever its size, but the pass costs time in proportion; a
// stream is kept whole in memory only up to this bound (on top of the
// ceiling's ~2 × MaxBytes) and only while a ContextPreview is in use, so
// memory stays bounded. Larger texts, and streams that run past the bound,
// get [Preview.Split]'s head and tail. 4 MiB is 170 ceilings' worth of
// text, far more than a build log or a grep needs, and tokenizes in tens
// of milliseconds.
const maxExcerptBytes = 4 << 20

// ContextPreview is a [Preview] that can also choose pieces from the
// middle of a payload, knowing the call and (through
// [harness.CallInfoFrom] on ctx) the transcript: what the agent asked for
// and what it is looking for. [ResultPolicy] uses Excerpt when its
// Preview implements it and the whole text is at hand and at most
// maxExcerptBytes; otherwise, or when Excerpt declines (ok false), it
// uses Split. [Relevant] is the implementation.
//
// As with Split, an implementation only chooses: the guard takes the
// spans in the order given while they fit in the budget (skipping any that
// do not), moves their ends to UTF-8 boundaries, replaces invalid UTF-8,
// shows them in text order with one line marking each gap ("… (lines
// 41-111 not shown, 5120 bytes)"), and writes the marker, so an Excerpt
// cannot break the ceiling.
type ContextPreview interface {
	Preview
	// Excerpt chooses spans of w's text (w.Head and w.Tail both hold the
	// whole text) for a model copy whose pieces, gap lines included, use
	// at most budget bytes.
	Excerpt(ctx context.Context, call *harness.ToolCall, w Window, budget int) (e Excerpt, ok bool)
}

// Excerpt is what a [ContextPreview] shows of a payload's text.
type Excerpt struct {
	// Spans are byte ranges of the text, the most important first: the
	// guard keeps each one that still fits, in this order, so a preview
	// states its priorities by the order alone. Overlapping and adjacent
	// spans are merged. At most maxExcerptSpans are considered.
	Spans []Span
	// Size is how much of the budget the excerpt may use, gap lines
	// included; 0, or more than the budget, means all of it.
	Size int
	// Why says, for the marker, on what grounds spans with Reasons were
	// picked, for example "they contain words of the call's arguments";
	// at most 160 bytes are shown.
	Why string
}

// maxExcerptSpans bounds the spans of an [Excerpt] the guard considers,
// and so its work.
const maxExcerptSpans = 4096

// Span is a byte range [Start, End) of a payload's text.
type Span struct {
	// Start and End are byte offsets into the text, Start inclusive and
	// End exclusive; the guard moves both to UTF-8 boundaries.
	Start, End int
	// Reasons are short words saying why the span was picked (for
	// [Relevant]: the query terms it contains); none for a head, a tail
	// or a line of context. The marker lists the reasons of the spans
	// shown.
	Reasons []string
}

// HeadTail is the default [Preview]: Head bytes from the start and Tail
// bytes from the end, each cut at a line break when one lies in the last
// (first) quarter of its share, so the model sees whole lines it can page
// from. When both are zero the defaults apply (3 KiB + 1 KiB); otherwise
// the values are taken as given (Tail 0 shows the head only). When the
// budget is smaller than Head+Tail, or Window.Fill asks for the whole
// budget, the budget is split in the same proportion.
type HeadTail struct {
	// Head and Tail are the shares in bytes of the start and the end;
	// both zero means the defaults (3 KiB, 1 KiB), negative values count
	// as 0.
	Head, Tail int
}

// Split implements [Preview].
func (p HeadTail) Split(w Window, budget int) (head, tail int) {
	h, t := p.Head, p.Tail
	if h <= 0 && t <= 0 {
		h, t = defaultPreviewHead, defaultPreviewTail
	}
	h, t = max(h, 0), max(t, 0)
	if budget <= 0 {
		return 0, 0
	}
	if w.Total <= int64(budget) && int64(len(w.Head)) >= w.Total {
		return int(w.Total), 0 // it all fits
	}
	if w.Fill || h+t > budget {
		// Scale in int64: h*budget may overflow int32 platforms' int.
		h = int(int64(budget) * int64(h) / int64(h+t))
		t = budget - h
	}
	h = min(h, len(w.Head))
	t = min(t, len(w.Tail))
	if h > 0 && int64(h) < w.Total {
		h = snapHead(w.Head[:h])
	}
	if t > 0 {
		t = snapTail(w.Tail[len(w.Tail)-t:])
	}
	return h, t
}

// snapHead shortens a head to end just after a line break when one lies in
// its last quarter.
func snapHead(b []byte) int {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 && i+1 >= len(b)-len(b)/4 {
		return i + 1
	}
	return len(b)
}

// snapTail shortens a tail to start just after a line break when one lies
// in its first quarter.
func snapTail(b []byte) int {
	quarter := b[:len(b)/4]
	if i := bytes.IndexByte(quarter, '\n'); i >= 0 {
		return len(b) - (i + 1)
	}
	return len(b)
}

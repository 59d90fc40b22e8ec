package guard

import "bytes"

// Default preview of a spilled result: the start carries the headline (a
// command line, a file's first lines, a JSON envelope), the end carries the
// verdict (the last lines of a build or test log).
const (
	DefaultPreviewHead = 3 << 10
	DefaultPreviewTail = 1 << 10
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

// HeadTail is the default [Preview]: Head bytes from the start and Tail
// bytes from the end, each cut at a line break when one lies in the last
// (first) quarter of its share, so the model sees whole lines it can page
// from. When both are zero the defaults apply (3 KiB + 1 KiB); otherwise
// the values are taken as given (Tail 0 shows the head only). When the
// budget is smaller than Head+Tail, or Window.Fill asks for the whole
// budget, the budget is split in the same proportion.
type HeadTail struct {
	Head, Tail int
}

// Split implements [Preview].
func (p HeadTail) Split(w Window, budget int) (head, tail int) {
	h, t := p.Head, p.Tail
	if h <= 0 && t <= 0 {
		h, t = DefaultPreviewHead, DefaultPreviewTail
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

package guard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/spill"
)

// streamOutcome tells run what consumeStream did.
type streamOutcome struct {
	// cut is set when the guard already made the model copy.
	cut bool
	// hasher has seen the stream's whole text (with the text of the parts
	// before it), for the dedupe digest; nil when the text is in Parts.
	hasher hash.Hash
	// skipSpill, when set, says why the in-memory result must not be
	// spilled (a save already failed); the ceiling truncates instead.
	skipSpill string
}

// digest is the dedupe digest of res, completing the stream's hasher.
func (st *streamOutcome) digest(res *harness.ToolResult) [sha256.Size]byte {
	if st == nil || st.hasher == nil {
		return payloadDigest(res)
	}
	return finishDigest(st.hasher, res)
}

// consumeStream reads res.Stream under the ceiling. A stream that fits
// becomes a text part; a larger one flows into the spill file through a
// fixed buffer while the guard keeps its first and last bytes for the
// preview. Without a spill it is kept in memory up to StreamKeep. The only
// error is ctx's.
func (g *resultGuard) consumeStream(ctx context.Context, call *harness.ToolCall, info harness.CallInfo, res *harness.ToolResult, limit int, wantDigest bool) (*streamOutcome, error) {
	stream := res.Stream
	res.Stream = nil
	defer stream.Close()
	// A tool that ignores ctx must not hold the guard: closing its stream
	// unblocks a pending read.
	stop := context.AfterFunc(ctx, func() { _ = stream.Close() })
	defer stop()

	if limit == 0 {
		// Dedupe only: the whole stream is the payload, as the agent
		// would drain it.
		b, err := io.ReadAll(stream)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", call.Name, ctx.Err())
		}
		appendStreamText(res, b, err)
		return nil, nil
	}

	prefix := res.FullText()
	if prefix != "" {
		prefix += "\n" // how Message.Text joins the stream's part to them
	}
	existing := res.PayloadSize()
	probe := make([]byte, max(limit-existing, 0)+1)
	n, err := io.ReadFull(stream, probe)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", call.Name, ctx.Err())
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = nil
		}
		appendStreamText(res, probe[:n], err)
		return nil, nil
	}

	// Over the ceiling.
	head := probe
	if prefix != "" {
		head = make([]byte, 0, len(prefix)+len(probe))
		head = append(append(head, prefix...), probe...)
	}
	return g.streamOver(ctx, call, info, res, stream, head, len(prefix), existing, limit, wantDigest)
}

// streamOver finishes a stream that went over the ceiling, head its first
// bytes (prefixLen of them the result's other parts): spilled when a
// store takes it, else kept in memory up to StreamKeep (see keepStream).
func (g *resultGuard) streamOver(ctx context.Context, call *harness.ToolCall, info harness.CallInfo, res *harness.ToolResult, stream io.Reader, head []byte, prefixLen, existing, limit int, wantDigest bool) (*streamOutcome, error) {
	tr := &streamTracker{ctx: ctx, r: stream, ring: &tailRing{buf: make([]byte, limit)}}
	if wantDigest {
		tr.hasher = sha256.New()
	}
	m := cutMarker{tool: markerSafe(call.Name, 64), limit: limit, images: resultImageCount(res.Parts)}
	page := spillPagePath(res, info)
	var store spill.Store
	if page == "" {
		store = g.storeFor(info)
	}
	if _, ok := g.preview.(ContextPreview); ok && store != nil {
		// A context-aware preview needs the whole text: keep it while it
		// stays within maxExcerptBytes (see there).
		tr.whole = make([]byte, 0, min(2*len(head), maxExcerptBytes))
	}
	tr.observe(head)
	switch {
	case store != nil:
		if out, done, err := g.spillStream(ctx, call, info, res, tr, &m, store, head, prefixLen, existing, limit); done {
			return out, err
		}
	case page != "":
		m.reason = "it is a page of a spill file"
	default:
		m.reason = g.noSpillReason()
	}
	return g.keepStream(ctx, call, res, tr, m, head, prefixLen, existing, limit, page)
}

// spillStream saves the stream to store. done is false when saving failed
// before any of the stream was consumed: the caller then keeps it in
// memory, and m says why it was not spilled.
func (g *resultGuard) spillStream(ctx context.Context, call *harness.ToolCall, info harness.CallInfo, res *harness.ToolResult, tr *streamTracker, m *cutMarker, store spill.Store, head []byte, prefixLen, existing, limit int) (out *streamOutcome, done bool, err error) {
	saved, serr := store.Save(ctx, spill.Entry{Conversation: info.Conversation, CallID: call.ID, Tool: call.Name, Ext: "txt"}, io.MultiReader(bytes.NewReader(head), tr))
	if ctx.Err() != nil {
		return nil, true, fmt.Errorf("%s: %w", call.Name, ctx.Err())
	}
	if serr == nil {
		m.mode, m.path, m.hint = modeSpilled, markerSafe(saved.Locator, 200), saved.Hint
		if m.hint == "" {
			m.hint = spill.DefaultHint
		}
		g.finishStream(ctx, call, res, tr, head, prefixLen, *m, existing, limit, saved.Locator)
		return &streamOutcome{cut: true, hasher: tr.hasher}, true, nil
	}
	emitResultWarning(ctx, call.Name+": could not spill a streamed result: "+serr.Error())
	tr.whole, tr.overflow = nil, true
	m.reason = "saving it failed: " + markerSafe(serr.Error(), 160)
	if tr.consumed == 0 {
		return nil, false, nil
	}
	// Part of the stream went into the failed file: what is not at hand
	// is lost.
	if err := tr.drain(); err != nil {
		return nil, true, fmt.Errorf("%s: %w", call.Name, err)
	}
	m.mode = modeLost
	g.finishStream(ctx, call, res, tr, head, prefixLen, *m, existing, limit, "")
	return &streamOutcome{cut: true, hasher: tr.hasher}, true, nil
}

// keepStream keeps an unspilled stream in memory up to StreamKeep: all of
// it at hand becomes a text part the ceiling treats like any in-memory
// result; beyond, the rest is read and counted but lost (or, for a page
// of a spill file, still in that file).
func (g *resultGuard) keepStream(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, tr *streamTracker, m cutMarker, head []byte, prefixLen, existing, limit int, page string) (*streamOutcome, error) {
	keep := max(g.streamKeep, len(head))
	buf := head
	for len(buf) < keep {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, rerr := tr.Read(buf[len(buf):min(cap(buf), keep)])
		buf = buf[:len(buf)+k]
		if rerr == io.EOF {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", call.Name, ctx.Err())
			}
			appendStreamText(res, buf[prefixLen:], tr.err)
			return &streamOutcome{skipSpill: m.reason}, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("%s: %w", call.Name, rerr)
		}
	}
	if err := tr.drain(); err != nil {
		return nil, fmt.Errorf("%s: %w", call.Name, err)
	}
	if tr.n <= int64(len(buf)) {
		appendStreamText(res, buf[prefixLen:], tr.err)
		return &streamOutcome{skipSpill: m.reason}, nil
	}
	m.mode = modeLost
	if page != "" {
		m.mode, m.path = modePage, markerSafe(page, 200)
	}
	g.finishStream(ctx, call, res, tr, buf, prefixLen, m, existing, limit, "")
	return &streamOutcome{cut: true, hasher: tr.hasher}, nil
}

// finishStream makes the model copy and the record of a stream that went
// over the ceiling. head holds its first bytes (after prefixLen bytes of
// text of the parts before it); the tracker's ring holds its last.
func (g *resultGuard) finishStream(ctx context.Context, call *harness.ToolCall, res *harness.ToolResult, tr *streamTracker, head []byte, prefixLen int, m cutMarker, existing, limit int, spillPath string) {
	streamBytes := tr.n - int64(prefixLen)
	m.size = int64(existing) + streamBytes
	if tr.err != nil {
		m.failure = markerSafe(tr.err.Error(), 120)
		res.IsError = true
	}
	tail := tr.ring.bytes()
	src := previewSource{head: head, tail: tail, total: tr.n, newlines: tr.nl}
	whole := false
	if m.mode == modeSpilled && tr.whole != nil && !tr.overflow && int64(len(tr.whole)) == tr.n {
		src, whole = previewSourceOf(tr.whole), true
	}
	out := g.renderPreview(ctx, call, src, whole, m, limit, m.mode != modeSpilled)
	tr.whole = nil
	res.Model = []harness.Part{harness.TextPart(out)}
	if res.Meta == nil {
		res.Meta = map[string]any{}
	}
	res.Meta["stream_bytes"] = streamBytes
	cut := harness.Cut{Kind: harness.CutTruncated, By: ResultPolicyName, BytesIn: int(m.size), BytesOut: len(out), Locator: locator.Call(call.ID)}
	switch m.mode {
	case modeSpilled:
		// The spill file is the full record; the transcript keeps what
		// the model was shown.
		res.Parts = append(res.Parts, harness.TextPart(out))
		res.Meta["spill_path"] = spillPath
		cut.Kind, cut.Locator = harness.CutSpilled, spillPath
	default:
		// Nothing holds the middle: the transcript keeps the first
		// StreamKeep bytes and the last ceiling's worth.
		if overlap := int64(len(head)) + int64(len(tail)) - tr.n; overlap > 0 {
			tail = tail[overlap:]
		}
		lost := tr.n - int64(len(head)) - int64(len(tail))
		res.Meta["stream_lost_bytes"] = lost
		var b bytes.Buffer
		b.Grow(len(head) - prefixLen + len(tail) + 200)
		b.Write(head[prefixLen:])
		fmt.Fprintf(&b, "\n\n[harness: %d bytes of this streamed output were not kept (%s)]\n\n", lost, m.reason)
		b.Write(tail)
		res.Parts = append(res.Parts, harness.TextPart(b.String()))
		if m.mode == modePage {
			cut.Locator = m.path
		}
	}
	res.Bytes = int(m.size)
	res.Cuts = append(res.Cuts, cut)
	emitResultCut(ctx, call, res, cut, limit, describeResultCut(call, cut))
}

// appendStreamText adds a consumed stream to the payload as the agent's
// own drain would; a stream that failed keeps what it produced and marks
// the result as an error the model can read.
func appendStreamText(res *harness.ToolResult, b []byte, err error) {
	if len(b) > 0 {
		res.Parts = append(res.Parts, harness.TextPart(string(b)))
	}
	if err != nil {
		res.IsError = true
		res.Parts = append(res.Parts, harness.TextPart(fmt.Sprintf("[harness: the tool's output stream failed after %d bytes: %v]", len(b), err)))
	}
}

// streamTracker reads a tool's stream for the spill while counting its
// bytes and lines, hashing it (for dedupe) and keeping its last bytes in a
// ring. It turns the stream's own failure into EOF, so that what the tool
// produced is still saved, and remembers the error.
type streamTracker struct {
	ctx    context.Context
	r      io.Reader
	ring   *tailRing
	hasher hash.Hash
	// n and nl count the bytes and line breaks observed (the head too);
	// consumed counts the bytes read from the stream past the head.
	n, nl, consumed int64
	err             error
	// whole, when not nil, keeps every byte observed for a ContextPreview
	// until it would pass maxExcerptBytes; then it is dropped and
	// overflow set.
	whole    []byte
	overflow bool
}

func (t *streamTracker) observe(p []byte) {
	if t.whole != nil {
		if len(t.whole)+len(p) > maxExcerptBytes {
			t.whole, t.overflow = nil, true
		} else {
			if len(t.whole)+len(p) > cap(t.whole) {
				// Grow by doubling, never past the bound.
				grown := make([]byte, len(t.whole), min(max(2*cap(t.whole), len(t.whole)+len(p)), maxExcerptBytes))
				copy(grown, t.whole)
				t.whole = grown
			}
			t.whole = append(t.whole, p...)
		}
	}
	t.n += int64(len(p))
	t.nl += int64(bytes.Count(p, []byte{'\n'}))
	t.ring.write(p)
	if t.hasher != nil {
		t.hasher.Write(p)
	}
}

// Read implements io.Reader.
func (t *streamTracker) Read(p []byte) (int, error) {
	if err := t.ctx.Err(); err != nil {
		return 0, err
	}
	if t.err != nil {
		return 0, io.EOF
	}
	n, err := t.r.Read(p)
	t.observe(p[:n])
	t.consumed += int64(n)
	if err != nil && err != io.EOF {
		if cerr := t.ctx.Err(); cerr != nil {
			return n, cerr // the read failed because ctx closed the stream
		}
		t.err = err
		return n, io.EOF
	}
	return n, err
}

// drain reads the rest of the stream through the tracker (counting,
// hashing, keeping the tail) and discards it.
func (t *streamTracker) drain() error {
	buf := make([]byte, 32<<10)
	for {
		_, err := t.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// tailRing keeps the last len(buf) bytes written to it.
type tailRing struct {
	buf  []byte
	pos  int
	full bool
}

func (r *tailRing) write(p []byte) {
	if len(r.buf) == 0 {
		return
	}
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.pos, r.full = 0, true
		return
	}
	n := copy(r.buf[r.pos:], p)
	if n < len(p) {
		r.pos = copy(r.buf, p[n:])
		r.full = true
		return
	}
	r.pos += n
	if r.pos == len(r.buf) {
		r.pos, r.full = 0, true
	}
}

// bytes returns the kept bytes in order. It rotates the buffer in place
// (no second buffer); writing may go on afterwards.
func (r *tailRing) bytes() []byte {
	if !r.full {
		return r.buf[:r.pos]
	}
	reverseBytes(r.buf[:r.pos])
	reverseBytes(r.buf[r.pos:])
	reverseBytes(r.buf)
	r.pos = 0
	return r.buf
}

func reverseBytes(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}

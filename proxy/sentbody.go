package proxy

import (
	"bytes"
	"hash/maphash"
	"io"
)

// sentBody is a request body as the proxy sends it upstream: the client's
// bytes with the edits applied (sorted by start, not overlapping), read in
// place. Nothing is copied: the upstream connection is written the
// unchanged stretches of the client's body and the edits' bytes in turn,
// so a long history costs no second megabyte per request.
type sentBody struct {
	in    []byte
	edits []edit
	// buf holds in when it is a pooled buffer (bodybuf.go).
	buf *bodyBuf
}

// size is the length of the body as sent.
func (s sentBody) size() int {
	n := len(s.in)
	for _, e := range s.edits {
		n += len(e.New) - (e.Span.End - e.Span.Start)
	}
	return n
}

// reader returns a reader of the body as sent (nil for a body that is
// nil), each call a new one from its start.
func (s sentBody) reader() io.Reader {
	if s.in == nil {
		return nil
	}
	if len(s.edits) == 0 {
		return bytes.NewReader(s.in)
	}
	return &sentReader{s: s}
}

// open returns a reader of the body as sent that holds its buffer until
// closed (and idle), or nil for a nil body.
func (s sentBody) open() io.ReadCloser {
	r := s.reader()
	if r == nil {
		return nil
	}
	return &heldReader{r: r, buf: s.buf.hold()}
}

// sentReader reads a sentBody.
type sentReader struct {
	s sentBody
	// next is the index of the edit after the stretch being read (len:
	// the tail), at the offset into the current piece, inEdit set while
	// the piece is that edit's bytes.
	next   int
	inEdit bool
	off    int
}

// piece returns the current piece's bytes not yet read, and whether it
// is the last.
func (r *sentReader) piece() ([]byte, bool) {
	edits := r.s.edits
	if r.inEdit {
		return edits[r.next].New[r.off:], false
	}
	start := 0
	if r.next > 0 {
		start = edits[r.next-1].Span.End
	}
	if r.next == len(edits) {
		return r.s.in[start+r.off:], true
	}
	return r.s.in[start+r.off : edits[r.next].Span.Start], false
}

// advance moves to the piece after the current one.
func (r *sentReader) advance() {
	if r.inEdit {
		r.next++
	}
	r.inEdit = !r.inEdit
	r.off = 0
}

func (r *sentReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, last := r.piece()
		m := copy(p[n:], b)
		n += m
		r.off += m
		if m == len(b) {
			if last {
				return n, io.EOF
			}
			r.advance()
		}
	}
	return n, nil
}

// WriteTo writes what is left of the body to w, piece by piece.
func (r *sentReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for {
		b, last := r.piece()
		m, err := w.Write(b)
		n += int64(m)
		r.off += m
		if err != nil {
			return n, err
		}
		if last {
			return n, nil
		}
		r.advance()
	}
}

// elemSums returns the maphash of each history element as sent: the
// client's element's hash (in[i]) where no edit falls inside it, the
// hash of its edited bytes otherwise. An edit lies within one element or
// outside all of them (the tools array).
func (s sentBody) elemSums(seed maphash.Seed, elems []span, in []uint64) []uint64 {
	out := make([]uint64, len(elems))
	k := 0
	for i, e := range elems {
		for k < len(s.edits) && s.edits[k].Span.End <= e.Start {
			k++
		}
		if k == len(s.edits) || s.edits[k].Span.Start >= e.End {
			out[i] = in[i]
			continue
		}
		var h maphash.Hash
		h.SetSeed(seed)
		at := e.Start
		for ; k < len(s.edits) && s.edits[k].Span.Start < e.End; k++ {
			h.Write(s.in[at:s.edits[k].Span.Start])
			h.Write(s.edits[k].New)
			at = s.edits[k].Span.End
		}
		h.Write(s.in[at:e.End])
		out[i] = h.Sum64()
	}
	return out
}

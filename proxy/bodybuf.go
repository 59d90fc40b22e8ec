package proxy

import (
	"errors"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
)

// A request body of a long conversation is most of what the proxy
// allocates per request (about 0.7 MB at 1,000 messages), so the buffers
// bodies are read into are reused once nothing holds them: the request
// being served, each reader of the body the upstream transport was handed
// (until the transport closes it and no read is under way), the parse kept
// for the next request (Proxy.remember) and the saving waiting to be
// counted. Everything else the proxy keeps of a request is copied out of
// the body (strings, a call's arguments: ownRaw), never a slice of it.
// Under the race detector a released buffer is overwritten, so a reader
// that outlives its hold reads garbage and fails a test.

// bodyBuf is one request body and its holders.
type bodyBuf struct {
	b    []byte
	refs atomic.Int32
	// pool is where the buffer goes back; nil for a body read without a
	// known length, which is not reused.
	pool *bodyPool
}

// hold adds a holder of bb (nil: none) and returns bb.
func (bb *bodyBuf) hold() *bodyBuf {
	if bb != nil {
		bb.refs.Add(1)
	}
	return bb
}

// release ends a hold; the last one gives the buffer back to its pool.
func (bb *bodyBuf) release() {
	if bb == nil {
		return
	}
	switch n := bb.refs.Add(-1); {
	case n < 0:
		panic("proxy: a request body released more often than held")
	case n == 0 && bb.pool != nil:
		bb.pool.put(bb)
	}
}

// bytes is the body (nil for a nil bodyBuf).
func (bb *bodyBuf) bytes() []byte {
	if bb == nil {
		return nil
	}
	return bb.b
}

// Pooled bodies are sized in powers of two from 64 KiB to 32 MiB (a body
// of 32 KiB or less is not pooled): a conversation's next body is a little longer than its
// last, so it mostly fits the buffer the last one left.
const (
	minPooledShift = 16 // 64 KiB
	maxPooledShift = 25 // 32 MiB
)

// bodyPool keeps released body buffers by size class.
type bodyPool struct {
	classes [maxPooledShift - minPooledShift + 1]sync.Pool
}

// class returns the size class of a body of n bytes, or -1 when bodies
// of that size are not pooled.
func bodyClass(n int) int {
	if n <= 1<<(minPooledShift-1) || n > 1<<maxPooledShift {
		return -1
	}
	return max(bits.Len(uint(n-1)), minPooledShift) - minPooledShift
}

func (bp *bodyPool) put(bb *bodyBuf) {
	if poisonReleased {
		b := bb.b[:cap(bb.b)]
		for i := range b {
			b[i] = 0xA5
		}
	}
	bp.classes[bodyClass(cap(bb.b))].Put(bb)
}

// errBodyClosed is what a reader of a body returns once closed.
var errBodyClosed = errors.New("proxy: read of a request body after its close")

// heldReader reads a body while holding it: the hold ends when the reader
// is closed and no read is under way, whichever comes last, so a
// transport that closes the body while another goroutine still writes it
// out never reads a buffer another request has taken.
type heldReader struct {
	r   io.Reader // a *bytes.Reader or a *sentReader: both io.WriterTo
	buf *bodyBuf

	mu     sync.Mutex
	busy   int
	closed bool
}

func (h *heldReader) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.busy++
	return true
}

func (h *heldReader) exit() {
	h.mu.Lock()
	h.busy--
	h.settle()
	h.mu.Unlock()
}

// settle ends the hold once closed and idle. Called with h.mu held.
func (h *heldReader) settle() {
	if h.closed && h.busy == 0 && h.buf != nil {
		h.buf.release()
		h.buf = nil
	}
}

func (h *heldReader) Read(p []byte) (int, error) {
	if !h.enter() {
		return 0, errBodyClosed
	}
	defer h.exit()
	return h.r.Read(p)
}

func (h *heldReader) WriteTo(w io.Writer) (int64, error) {
	if !h.enter() {
		return 0, errBodyClosed
	}
	defer h.exit()
	return h.r.(io.WriterTo).WriteTo(w)
}

func (h *heldReader) Close() error {
	h.mu.Lock()
	h.closed = true
	h.settle()
	h.mu.Unlock()
	return nil
}

// firstBodyBuffer is the buffer a body read by its Content-Length starts
// with when no pooled buffer of its size is free: a body of up to this
// size is read into a buffer of its size class at once, without the
// copies of growing one (most bodies are this size or less).
const firstBodyBuffer = 512 << 10

// classCap is the capacity a buffer for a body of n bytes grows to: its
// size class when bodies of that size are pooled, else n.
func classCap(n int64) int64 {
	if c := bodyClass(int(n)); c >= 0 {
		return 1 << (c + minPooledShift)
	}
	return n
}

// read reads a body whose Content-Length announces n bytes, held once by
// the caller. A free pooled buffer of n's size class is used as it is;
// otherwise the buffer grows as the bytes arrive, doubling from
// firstBodyBuffer up to n's class, so a client that announces more than
// it sends costs at most firstBodyBuffer or twice what it sent, and the
// grown buffer joins the pool when released. A body shorter than announced is
// io.ErrUnexpectedEOF; a longer one an error.
func (bp *bodyPool) read(rd io.Reader, n int64) (*bodyBuf, error) {
	if c := bodyClass(int(n)); c >= 0 && bp != nil {
		if bb, _ := bp.classes[c].Get().(*bodyBuf); bb != nil {
			bb.b = bb.b[:n]
			bb.refs.Store(1)
			if err := readExactly(rd, bb.b); err != nil {
				bb.release()
				return nil, err
			}
			return bb, nil
		}
	}
	limit := classCap(n)
	body := make([]byte, 0, min(limit, firstBodyBuffer))
	for int64(len(body)) < n {
		if len(body) == cap(body) {
			grown := make([]byte, len(body), min(limit, 2*int64(cap(body))))
			copy(grown, body)
			body = grown
		}
		m, err := rd.Read(body[len(body):int(min(int64(cap(body)), n))])
		body = body[:len(body)+m]
		if errors.Is(err, io.EOF) && int64(len(body)) < n {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	if err := noMore(rd); err != nil {
		return nil, err
	}
	bb := &bodyBuf{b: body}
	if bp != nil && bodyClass(cap(body)) >= 0 && int64(cap(body)) == limit {
		bb.pool = bp
	}
	bb.refs.Store(1)
	return bb, nil
}

// readExactly fills b from rd and checks that nothing follows.
func readExactly(rd io.Reader, b []byte) error {
	if _, err := io.ReadFull(rd, b); err != nil {
		return err
	}
	return noMore(rd)
}

// noMore reports an error when rd has bytes beyond the announced length.
func noMore(rd io.Reader) error {
	var one [1]byte
	if m, _ := rd.Read(one[:]); m > 0 {
		return errors.New("the body is longer than its Content-Length")
	}
	return nil
}

package workspace

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// lineBufSize is the read buffer of the line readers: the only memory a
// scan of a large file uses besides what it keeps.
const lineBufSize = 64 << 10

// lineReader reads a file line by line in bounded memory: a line longer
// than the buffer is consumed in pieces, and only the first max bytes of it
// are kept.
type lineReader struct {
	ctx context.Context
	br  *bufio.Reader
	n   int64 // lines consumed so far
}

func newLineReader(ctx context.Context, r io.Reader) *lineReader {
	return &lineReader{ctx: ctx, br: bufio.NewReaderSize(r, lineBufSize)}
}

// next consumes one line. It returns at most max bytes of its content
// (without the "\n" or "\r\n" that ends it) appended to buf[:0], and the
// content's full length. When keep is false nothing is copied. ok is false
// at the end of the input.
func (lr *lineReader) next(buf []byte, keep bool, max int) (out []byte, length int64, ok bool, err error) {
	if lr.n&1023 == 0 {
		if err := lr.ctx.Err(); err != nil {
			return nil, 0, false, err
		}
	}
	out = buf[:0]
	var prevLast byte // last byte of the previous piece, to see a "\r" split from its "\n"
	for {
		chunk, rerr := lr.br.ReadSlice('\n')
		if keep && len(out) < max {
			out = append(out, chunk[:min(len(chunk), max-len(out))]...)
		}
		if len(chunk) > 0 && rerr == nil {
			// chunk ends with '\n': drop it, and a '\r' before it.
			content := length + int64(len(chunk)) - 1
			before := prevLast
			if len(chunk) >= 2 {
				before = chunk[len(chunk)-2]
			}
			if content > 0 && before == '\r' {
				content--
			}
			lr.n++
			if int64(len(out)) > content {
				out = out[:content]
			}
			return out, content, true, nil
		}
		length += int64(len(chunk))
		if len(chunk) > 0 {
			prevLast = chunk[len(chunk)-1]
		}
		switch {
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			if length == 0 {
				return out, 0, false, nil
			}
			lr.n++ // a last line without a newline
			return out, length, true, nil
		default:
			return out, length, false, rerr
		}
	}
}

// skip consumes lines until n lines have been read or the input ends.
func (lr *lineReader) skip(n int64) error {
	for lr.n < n {
		_, _, ok, err := lr.next(nil, false, 0)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
	return nil
}

// count consumes the rest of the input and returns the total number of
// lines read.
func (lr *lineReader) count() (int64, error) {
	for {
		_, _, ok, err := lr.next(nil, false, 0)
		if err != nil {
			return lr.n, err
		}
		if !ok {
			return lr.n, nil
		}
	}
}

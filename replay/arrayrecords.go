package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonSpace are the bytes JSON allows between values.
const jsonSpace = " \t\r\n"

// arrayRecords iterates over the elements of the JSON array r holds, which
// starts at byte base of the file, decoding one element at a time: memory
// holds about one element (twice: as read and as decoded), whatever the
// array's size. A syntax error is reported at the byte where unmarshalling
// the whole file would report it; data after the array is an error, as
// arrayElems makes it.
func arrayRecords(src *source, r io.Reader, base int64) func(recordFunc) error {
	return func(fn recordFunc) error {
		a := newArrayWalk(src, r, base)
		if err := a.open(); err != nil {
			return err
		}
		for {
			v, path, ok, err := a.next()
			if err != nil || !ok {
				return err
			}
			if err := fn(v, path); err != nil {
				return err
			}
		}
	}
}

// arrayWalk reads a JSON array one element at a time (see arrayRecords).
type arrayWalk struct {
	src  *source
	dec  *json.Decoder
	win  *readWindow
	base int64
	n    int // elements read
}

func newArrayWalk(src *source, r io.Reader, base int64) *arrayWalk {
	win := &readWindow{r: r, start: base}
	return &arrayWalk{src: src, dec: json.NewDecoder(win), win: win, base: base}
}

// open reads the opening bracket.
func (a *arrayWalk) open() error {
	tok, err := a.dec.Token()
	if err != nil {
		return a.fail("", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return a.src.errAt(a.base, "", fmt.Sprintf("expected a JSON array, found %s", describe(tok)), nil)
	}
	return nil
}

// next returns the next element and its path ("[3]"); ok is false after
// the last, once the closing bracket and the end of the input are read.
func (a *arrayWalk) next() (v rawValue, path string, ok bool, err error) {
	dec := a.dec
	if !dec.More() {
		if _, err := dec.Token(); err != nil {
			return v, "", false, a.fail("", err)
		}
		if err := trailing(dec); err != nil {
			return v, "", false, a.src.errAt(a.base+dec.InputOffset(), "", "unexpected data after the JSON value", err)
		}
		return v, "", false, nil
	}
	path = fmt.Sprintf("[%d]", a.n)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return v, "", false, a.fail(path, err)
	}
	end := a.base + dec.InputOffset()
	a.win.drop(end)
	a.n++
	return rawValue{raw: raw, off: end - int64(len(raw))}, path, true, nil
}

// fail reports an error the decoder met after the n-th element. The bytes
// read since that element ended (win) hold the first bad byte;
// unmarshalling them behind a prefix that leaves the scanner where the
// whole file's would be there (none before the first element, whose
// window starts at the "[", and "[0" after one) finds it exactly.
func (a *arrayWalk) fail(path string, err error) error {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return a.src.errAt(a.win.start, path, "cannot read", err)
	}
	prefix := "" // before the first element, the window starts with "["
	if a.n > 0 {
		prefix = "[0"
	}
	data := append([]byte(prefix), a.win.buf...)
	var v any
	if uerr := json.Unmarshal(data, &v); uerr != nil {
		return a.src.jsonErr(a.win.start-int64(len(prefix)), path, uerr)
	}
	return a.src.errAt(a.win.start, path, "invalid JSON", err)
}

// readWindow is a reader that keeps the bytes read through it from file
// offset start on, until drop forgets them.
type readWindow struct {
	r     io.Reader
	buf   []byte
	start int64
}

func (w *readWindow) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	return n, err
}

// drop forgets the bytes before file offset off.
func (w *readWindow) drop(off int64) {
	k := off - w.start
	if k <= 0 {
		return
	}
	n := copy(w.buf, w.buf[k:])
	w.buf = w.buf[:n]
	w.start = off
}

package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ParseError reports a recording that cannot be imported: the file, the
// position (byte offset, and the line and column it falls on) and what is
// wrong there.
type ParseError struct {
	File   string
	Offset int64
	// Line and Col count from 1; Col counts bytes.
	Line, Col int
	// Path locates the bad value in the document, such as
	// "messages[12].tool_calls[0]"; empty when unknown.
	Path string
	Msg  string
	Err  error
}

// Error returns "file:line:col (byte N): path: msg". The position is the
// byte where the problem was found: for invalid JSON the offending byte,
// for a value of the wrong type its last byte, for a message that does not
// fit the conversation the start of the message.
func (e *ParseError) Error() string {
	s := fmt.Sprintf("%s:%d:%d (byte %d)", e.File, e.Line, e.Col, e.Offset)
	if e.Path != "" {
		s += ": " + e.Path
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// source is a file being parsed: its name and bytes, to turn offsets
// into positions. A file read as a stream (streamed) holds only the record
// being read, if that: a position is found by reading the file named name
// again up to its offset, which only an error does.
type source struct {
	name     string
	data     []byte
	streamed bool
}

// errAt returns a ParseError at byte offset off.
func (s *source) errAt(off int64, path, msg string, err error) *ParseError {
	var line, col int
	if s.streamed {
		off, line, col = filePosition(s.name, max(0, off))
	} else {
		off = max(0, min(off, int64(len(s.data))))
		line, col = position(s.data, off)
	}
	return &ParseError{File: s.name, Offset: off, Line: line, Col: col, Path: path, Msg: msg, Err: err}
}

// jsonErr turns an encoding/json error found while decoding the value
// that starts at base into a ParseError at the offending byte.
func (s *source) jsonErr(base int64, path string, err error) *ParseError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return s.errAt(base+max(syn.Offset-1, 0), path, "invalid JSON", err)
	case errors.As(err, &typ):
		p := path
		if typ.Field != "" {
			p = joinPath(path, typ.Field)
		}
		return s.errAt(base+max(typ.Offset-1, 0), p, "unexpected JSON type", err)
	}
	return s.errAt(base, path, "invalid JSON", err)
}

// streamErr reports an error a json.Decoder met while walking the value
// data, which starts at byte base. A Decoder's offsets are not exact, so a
// syntax error is located by unmarshalling the value, which finds the
// same first bad byte.
func (s *source) streamErr(base int64, data []byte, path string, err error) *ParseError {
	var v any
	if uerr := json.Unmarshal(data, &v); uerr != nil {
		return s.jsonErr(base, path, uerr)
	}
	return s.errAt(base, path, "invalid JSON", err)
}

// filePosition returns off (no further than the file's end) and the
// 1-based line and byte column it falls on in the file at path, reading
// it in blocks; (0, 1, 1) when the file cannot be read.
func filePosition(path string, off int64) (int64, int, int) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 1, 1
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n, lineStart int64
	line := 1
	for n < off {
		k, err := f.Read(buf[:min(int64(len(buf)), off-n)])
		chunk := buf[:k]
		line += bytes.Count(chunk, []byte{'\n'})
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			lineStart = n + int64(i) + 1
		}
		n += int64(k)
		if err != nil {
			break
		}
	}
	return n, line, int(n-lineStart) + 1
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// position returns the 1-based line and byte column of offset off.
func position(data []byte, off int64) (line, col int) {
	head := data[:off]
	line = bytes.Count(head, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(head, '\n') + 1) + 1
	return line, col
}

// incompleteLine is the warning for a file whose last line was cut short
// (what, a session or an output, was still being written when read): that
// line is left out.
func incompleteLine(what string) string {
	return "the last line is incomplete (the " + what + " was still being written): left out"
}

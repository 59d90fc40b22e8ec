package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// into positions. A JSONL file read one line at a time (jsonlLines) holds
// only the current line: data starts at byte base, on line number line.
type source struct {
	name string
	data []byte
	base int64
	line int // 0: data is the whole file
}

// errAt returns a ParseError at byte offset off.
func (s *source) errAt(off int64, path, msg string, err error) *ParseError {
	if s.line > 0 {
		return s.lineErrAt(off, path, msg, err)
	}
	off = max(0, min(off, int64(len(s.data))))
	line, col := position(s.data, off)
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

// streamErr reports an error a json.Decoder met while walking the file.
// A Decoder's offsets are not exact, so a syntax error is located by
// unmarshalling the whole file, which finds the same first bad byte.
func (s *source) streamErr(path string, err error) *ParseError {
	var v any
	if uerr := json.Unmarshal(s.data, &v); uerr != nil {
		return s.jsonErr(0, path, uerr)
	}
	return s.errAt(0, path, "invalid JSON", err)
}

// lineErrAt is errAt for a file read one line at a time: off is in the
// current line, or 0 (the file as a whole).
func (s *source) lineErrAt(off int64, path, msg string, err error) *ParseError {
	if off < s.base {
		return &ParseError{File: s.name, Offset: 0, Line: 1, Col: 1, Path: path, Msg: msg, Err: err}
	}
	off = min(off, s.base+int64(len(s.data)))
	return &ParseError{File: s.name, Offset: off, Line: s.line, Col: int(off-s.base) + 1, Path: path, Msg: msg, Err: err}
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

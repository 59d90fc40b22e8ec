package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// parseFileStream imports the file at path as ParseAll does, leaving out
// the Claude Code entries seen holds (nil: none). A Claude Code session
// in JSONL is read one entry at a time: each line is decoded and dropped,
// so memory is bounded by a few times the longest line (the line as read,
// then decoded) plus what the recordings keep, whatever the file's size.
// Other formats are read whole.
func parseFileStream(path string, seen ccSeen) ([]*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	lr := &jsonlLines{r: bufio.NewReaderSize(f, 64<<10)}
	var head []byte // the blank lines before the first record, and it
	for {
		text, raw, eof, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		head = append(head, raw...)
		if len(bytes.TrimSpace(text)) > 0 || eof {
			break
		}
	}
	first := bytes.TrimSpace(head)
	if len(first) > 0 && first[0] != '[' && json.Valid(first) && Sniff(first) == FormatClaudeCode {
		src := &source{name: path}
		return parseClaudeCodeEach(src, func(fn func(rawValue, string) error) (bool, error) {
			return lr.each(src, head, fn)
		}, seen)
	}
	rest, err := io.ReadAll(lr.r)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	data := append(head, rest...)
	if Sniff(data) == FormatClaudeCode {
		return parseClaudeCodeSeen(path, data, seen)
	}
	return ParseAll(path, data)
}

// jsonlLines reads a JSONL file one line at a time, counting lines and
// bytes.
type jsonlLines struct {
	r    *bufio.Reader
	off  int64 // where the next line starts
	line int   // the number of lines read
}

// next reads one line: raw as read, text without its line ending; eof
// is set for the last line (read up to the end of the file, no newline).
// Each line is a fresh slice.
func (l *jsonlLines) next() (text, raw []byte, eof bool, err error) {
	raw, err = l.r.ReadBytes('\n')
	if errors.Is(err, io.EOF) {
		eof, err = true, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	l.off += int64(len(raw))
	l.line++
	return bytes.TrimRight(raw, "\r\n"), raw, eof, nil
}

// each passes fn the records of a JSONL file as records does, one line
// at a time: head is what next has read so far (blank lines, then the
// first record, all at the start of the file), the rest comes from l.
// src holds the current line while fn runs.
func (l *jsonlLines) each(src *source, head []byte, fn func(rawValue, string) error) (partial bool, err error) {
	off, line := int64(0), 0
	for len(head) > 0 {
		raw, tail, found := bytes.Cut(head, []byte{'\n'})
		head, line = tail, line+1
		if p, err := l.record(src, raw, off, line, !found, fn); p || err != nil {
			return p, err
		}
		off += int64(len(raw)) + 1
	}
	for {
		text, raw, eof, err := l.next()
		if err != nil {
			return false, fmt.Errorf("replay: %w", err)
		}
		if len(raw) == 0 {
			return false, nil
		}
		if p, err := l.record(src, text, l.off-int64(len(raw)), l.line, eof, fn); p || err != nil {
			return p, err
		}
		if eof {
			return false, nil
		}
	}
}

// record passes fn one line's record (none for a blank line); a last
// line that is not valid JSON is left out and reported by partial.
func (l *jsonlLines) record(src *source, text []byte, off int64, line int, last bool, fn func(rawValue, string) error) (partial bool, err error) {
	text = bytes.TrimRight(text, "\r\n")
	if len(bytes.TrimSpace(text)) == 0 {
		return false, nil
	}
	if last && !json.Valid(text) {
		return true, nil
	}
	src.data, src.base, src.line = text, off, line
	return false, fn(rawValue{raw: text, off: off}, fmt.Sprintf("line %d", line))
}

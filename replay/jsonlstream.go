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
// the Claude Code entries seen holds (nil: none). A Claude Code session, a
// Codex rollout, and a Gemini CLI Content list, session log or stream-json
// output are read one record at a time, whether JSONL (a line each) or one
// JSON array (an element each, however long its line): each record is
// decoded and dropped, so memory is bounded by a few times the largest
// record plus what the recordings keep, whatever the file's size. Other
// formats, and a file whose first record does not name its format, are
// read whole.
func parseFileStream(path string, seen ccSeen) ([]*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	src := &source{name: path, streamed: true}
	var head []byte // what the line reader read before giving up
	if startsArray(br) {
		if recs, ok, err := parseArrayStream(src, br, seen); ok {
			return recs, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		br.Reset(f)
		head = nil
	} else {
		var recs []*Recording
		var ok bool
		if recs, head, ok, err = parseLinesStream(src, &jsonlLines{r: br}, seen); ok {
			return recs, err
		}
	}
	data, err := readWhole(br, head, maxWholeFile)
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if sniff(data) == formatClaudeCode {
		return parseClaudeCodeAll(path, data, seen)
	}
	return ParseAll(path, data)
}

// maxWholeFile bounds a file read whole (formats that are not streamed,
// and files whose first record names no format): with it, an import holds
// at most a few times this much, however large the file.
const maxWholeFile = 256 << 20

// errTooLargeToReadWhole is a file over maxWholeFile in a format read whole.
var errTooLargeToReadWhole = errors.New("over 256 MiB in a format read whole (SWE-agent and mini-swe-agent trajectories, chat-message lists, a Gemini CLI session file or json output): only Claude Code sessions, Codex rollouts and Gemini CLI logs are read a record at a time at any size; split the file or import its records in one of those formats")

// readWhole returns head and the rest of r, or errTooLargeToReadWhole
// once they pass limit bytes (reading at most one byte more).
func readWhole(r io.Reader, head []byte, limit int64) ([]byte, error) {
	rest, err := io.ReadAll(io.LimitReader(r, limit+1-int64(len(head))))
	if err != nil {
		return nil, err
	}
	if int64(len(head)+len(rest)) > limit {
		return nil, errTooLargeToReadWhole
	}
	return append(head, rest...), nil
}

// startsArray reports whether r starts with a JSON array: "[" after JSON
// whitespace, within r's buffer. It reads nothing.
func startsArray(r *bufio.Reader) bool {
	for n := 1; n <= r.Size(); n++ {
		b, err := r.Peek(n)
		if err != nil {
			return false
		}
		if c := b[n-1]; !bytes.ContainsRune([]byte(jsonSpace), rune(c)) {
			return c == '['
		}
	}
	return false
}

// streamParser picks the importer that reads a file record by record
// from its first record's fields; nil when the file is read whole.
func streamParser(src *source, first map[string]json.RawMessage, array bool, seen ccSeen) func(recordIter) ([]*Recording, error) {
	gemini := func(read func(*gemBuilder, recordIter) error) func(recordIter) ([]*Recording, error) {
		return func(each recordIter) ([]*Recording, error) {
			b := newGemBuilder(src)
			if err := read(b, each); err != nil {
				return nil, err
			}
			rec, err := b.finish()
			if err != nil {
				return nil, err
			}
			return []*Recording{rec}, nil
		}
	}
	switch sniffFields(first) {
	case formatClaudeCode:
		return func(each recordIter) ([]*Recording, error) { return parseClaudeCodeEach(src, each, seen) }
	case formatCodex:
		if isCodexExec(first) {
			return nil // codex exec --json output: read whole (parseCodexExec)
		}
		return func(each recordIter) ([]*Recording, error) { return parseCodexEach(src, each) }
	case formatGeminiCLI:
		switch {
		case gemIsStream(first):
			return gemini((*gemBuilder).streamOutput)
		case gemIsOutput(first):
			return nil
		case array:
			return gemini((*gemBuilder).contents)
		case !has(first, "messages"):
			return gemini((*gemBuilder).sessionLog)
		}
	}
	return nil
}

// parseArrayStream imports a file holding one JSON array element by
// element; ok is false when
// its first element does not name a format streamParser reads (or is
// broken), and the file is to be read whole.
func parseArrayStream(src *source, r io.Reader, seen ccSeen) (recs []*Recording, ok bool, err error) {
	a := newArrayWalk(src, r, 0)
	if a.open() != nil {
		return nil, false, nil
	}
	first, path, more, err := a.next()
	var fields map[string]json.RawMessage
	if err != nil || !more || json.Unmarshal(first.raw, &fields) != nil || fields == nil {
		return nil, false, nil
	}
	parse := streamParser(src, fields, true, seen)
	if parse == nil {
		return nil, false, nil
	}
	recs, err = parse(func(fn recordFunc) (bool, error) {
		if err := fn(first, path); err != nil {
			return false, err
		}
		for {
			v, path, more, err := a.next()
			if err != nil || !more {
				return false, err
			}
			if err := fn(v, path); err != nil {
				return false, err
			}
		}
	})
	return recs, true, err
}

// parseLinesStream imports a JSONL file line by line; ok is false when
// its first record does not name a format streamParser reads, and head is
// then what was read (the blank lines, then the first line).
func parseLinesStream(src *source, lr *jsonlLines, seen ccSeen) (recs []*Recording, head []byte, ok bool, err error) {
	for {
		text, raw, eof, err := lr.next()
		if err != nil {
			return nil, nil, true, fmt.Errorf("replay: %w", err)
		}
		head = append(head, raw...)
		if len(bytes.TrimSpace(text)) > 0 || eof {
			break
		}
	}
	first := bytes.TrimSpace(head)
	var fields map[string]json.RawMessage
	if len(first) == 0 || first[0] == '[' || json.Unmarshal(first, &fields) != nil || fields == nil {
		return nil, head, false, nil
	}
	parse := streamParser(src, fields, false, seen)
	if parse == nil {
		return nil, head, false, nil
	}
	recs, err = parse(func(fn recordFunc) (bool, error) {
		return lr.each(head, fn)
	})
	return recs, nil, true, err
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
func (l *jsonlLines) each(head []byte, fn recordFunc) (partial bool, err error) {
	off, line := int64(0), 0
	for len(head) > 0 {
		raw, tail, found := bytes.Cut(head, []byte{'\n'})
		head, line = tail, line+1
		if p, err := record(raw, off, line, !found, fn); p || err != nil {
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
		if p, err := record(text, l.off-int64(len(raw)), l.line, eof, fn); p || err != nil {
			return p, err
		}
		if eof {
			return false, nil
		}
	}
}

// record passes fn one line's record (none for a blank line); a last
// line that is not valid JSON is left out and reported by partial.
func record(text []byte, off int64, line int, last bool, fn recordFunc) (partial bool, err error) {
	text = bytes.TrimRight(text, "\r\n")
	if len(bytes.TrimSpace(text)) == 0 {
		return false, nil
	}
	if last && !json.Valid(text) {
		return true, nil
	}
	return false, fn(rawValue{raw: text, off: off}, fmt.Sprintf("line %d", line))
}

package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// recordFunc is handed one record and a path for errors ("[3]" or
// "line 4").
type recordFunc func(v rawValue, path string) error

// recordIter passes fn each record of a file in order, stopping at fn's
// first error, which it returns. partial reports a last JSONL line left
// out (see records).
type recordIter func(fn recordFunc) (partial bool, err error)

// records iterates over the JSON values of a file held whole that is
// either one JSON array (each element a record) or JSONL (one record per
// non-blank line), each with its byte offset; an array is walked one
// element at a time as a file read as a stream is (arrayRecords), so both
// report the same first error.
//
// A last JSONL line that is not valid JSON and has no newline after it is
// left out and reported by partial: agents append to their session files
// as they run, so a file read while its agent is running ends mid-line.
// Any other line that is not valid JSON is an error.
func records(src *source) recordIter {
	data := src.data
	return func(fn recordFunc) (bool, error) {
		start := skipSpace(data, 0)
		if start >= int64(len(data)) {
			return false, src.errAt(start, "", "empty file", nil)
		}
		if ws := len(data) - len(bytes.TrimLeft(data, jsonSpace)); data[ws] == '[' {
			return false, arrayRecords(src, bytes.NewReader(data), 0)(fn)
		}
		off := int64(0)
		for line := 1; off < int64(len(data)); line++ {
			end := bytes.IndexByte(data[off:], '\n')
			next := int64(len(data))
			if end >= 0 {
				next = off + int64(end) + 1
			}
			text := bytes.TrimRight(data[off:next], "\r\n")
			if len(bytes.TrimSpace(text)) > 0 {
				if end < 0 && !json.Valid(text) {
					return true, nil
				}
				if err := fn(rawValue{raw: text, off: off}, fmt.Sprintf("line %d", line)); err != nil {
					return false, err
				}
			}
			off = next
		}
		return false, nil
	}
}

// firstRecord returns the fields of a file's first record (the first
// element of a JSON array, or the first JSONL line), for sniffing its
// format; ok is false when there is none or it is not a JSON object.
func firstRecord(data []byte) (fields map[string]json.RawMessage, ok bool) {
	start := skipSpace(data, 0)
	if start >= int64(len(data)) {
		return nil, false
	}
	var raw []byte
	if data[start] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		if _, err := dec.Token(); err != nil || !dec.More() {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		raw = v
	} else {
		line, _, _ := bytes.Cut(data[start:], []byte("\n"))
		raw = bytes.TrimSpace(line)
		if !json.Valid(raw) {
			// One JSON object over many lines: the object is the record.
			var v json.RawMessage
			if json.NewDecoder(bytes.NewReader(data[start:])).Decode(&v) != nil {
				return nil, false
			}
			raw = v
		}
	}
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, false
	}
	return fields, true
}

// has reports whether fields holds every key.
func has(fields map[string]json.RawMessage, keys ...string) bool {
	for _, k := range keys {
		if _, ok := fields[k]; !ok {
			return false
		}
	}
	return true
}

// jsonString returns the string a field holds, "" for anything else.
func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

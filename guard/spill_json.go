package guard

import (
	"bytes"
	"encoding/json"
)

// maxSpillGrowth bounds a pretty-printed spill file against the bytes it
// was printed from. json.Indent writes a line break and two spaces per
// level of nesting before every element, so its output grows with the
// square of the depth: 80 KB of `{"a":` nested 9,999 deep would print as
// 200 MB. Past this factor the bytes are spilled as they came, so a spill
// file is never more than maxSpillGrowth times the result.
const maxSpillGrowth = 4

// indentedSizeBound is an upper bound on the size json.Indent(_, t, "",
// "  ") writes, plus its final line break, found in one pass over t and
// without allocating: every '{', '[', ',' and closing bracket may start a
// line indented two spaces per level, and every ':' gains a space.
// Whitespace between tokens, which Indent drops, is counted as kept. The
// count stops once it passes limit (the caller keeps the bytes then).
func indentedSizeBound(t []byte, limit int64) int64 {
	n := int64(len(t)) + 1
	depth := int64(0)
	inString, escaped := false, false
	for _, c := range t {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			n += 1 + 2*depth
		case '}', ']':
			depth = max(depth-1, 0)
			n += 1 + 2*depth
		case ',':
			n += 1 + 2*depth
		case ':':
			n++
		}
		if n > limit {
			return n
		}
	}
	return n
}

// spillPrettyJSON indents a JSON object or array when the result stays
// within maxSpillGrowth times the input; anything else is not a document
// worth re-formatting (ok false). The work and the memory are linear in
// len(raw) whatever the document's shape.
func spillPrettyJSON(raw []byte) ([]byte, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	limit := int64(len(t)) * maxSpillGrowth
	size := indentedSizeBound(t, limit)
	if size > limit {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(int(size))
	if json.Indent(&b, t, "", "  ") != nil {
		return nil, false
	}
	b.WriteByte('\n')
	return b.Bytes(), true
}

// spillRawJSON is the spill file of a JSON document too deep to
// pretty-print within maxSpillGrowth: its bytes as they came, when they are
// valid JSON (ok false otherwise).
func spillRawJSON(raw []byte) ([]byte, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		return nil, false
	}
	return raw, true
}

// spillJSONDoc is the spill file of a payload that is one JSON object or
// array: pretty-printed when that stays within maxSpillGrowth, otherwise
// the bytes as they came (ok false when raw is not such a document).
func spillJSONDoc(raw []byte) ([]byte, bool) {
	if pretty, ok := spillPrettyJSON(raw); ok {
		return pretty, true
	}
	return spillRawJSON(raw)
}

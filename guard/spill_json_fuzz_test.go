package guard

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
)

// FuzzSpillJSON: for any bytes, the indented-size bound is never below
// what json.Indent writes, and a spill file is at most maxSpillGrowth
// times the result (plus a line break), JSON when it says so.
func FuzzSpillJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,[2,[3]]]`, `{"a":{"a":{"a":1}}}`, `{"s":"\"]}\\"}`, `[`, `not json`, " {\"x\" : [ 1 , 2 ] } \n", nestedJSON(300)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b bytes.Buffer
		if json.Indent(&b, bytes.TrimSpace(raw), "", "  ") == nil {
			if got := indentedSizeBound(bytes.TrimSpace(raw), 1<<40); got < int64(b.Len()+1) {
				t.Fatalf("bound %d below the indented size %d", got, b.Len()+1)
			}
		}
		res := harness.TextResult(string(raw))
		got, ext := spillContent(&harness.ToolCall{ID: "c", Name: "tool"}, res)
		if len(got) > maxSpillGrowth*len(raw)+1 && len(raw) > 0 {
			t.Fatalf("spill file %d bytes for %d", len(got), len(raw))
		}
		if ext == "json" && !json.Valid(got) {
			t.Fatalf("a .json spill file that does not parse: %q", got)
		}
	})
}

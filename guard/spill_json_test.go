package guard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// nestedJSON is `{"a":` depth times, then 1 and the closing braces: the
// shape whose pretty-printed form grows with the square of its depth.
func nestedJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// TestSpillContentIsLinear: whatever the shape of a JSON result, its spill
// file is at most maxSpillGrowth times the result (plus a line break and,
// for several parts, the envelope); a document whose pretty form would
// grow past that is kept as it came, and still parses.
func TestSpillContentIsLinear(t *testing.T) {
	flat := `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"name":"x","v":1},`, 500), ",") + `]}`
	for _, tc := range []struct {
		name   string
		res    *harness.ToolResult
		raw    string // the bytes kept as they came, "" when pretty-printed
		pretty bool
	}{
		{"nested text", harness.TextResult(nestedJSON(2000)), nestedJSON(2000), false},
		{"nested json part", &harness.ToolResult{Parts: []harness.Part{harness.JSONPart([]byte(nestedJSON(2000)))}}, nestedJSON(2000), false},
		{"nested array", harness.TextResult(strings.Repeat("[", 3000) + strings.Repeat("]", 3000)), strings.Repeat("[", 3000) + strings.Repeat("]", 3000), false},
		{"nested in several parts", &harness.ToolResult{Parts: []harness.Part{harness.JSONPart([]byte(nestedJSON(2000))), harness.JSONPart([]byte(nestedJSON(2000)))}}, "", false},
		{"flat text", harness.TextResult(flat), "", true},
		{"flat json part", &harness.ToolResult{Parts: []harness.Part{harness.JSONPart([]byte(flat))}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := tc.res.PayloadSize()
			got, ext := spillContent(&harness.ToolCall{ID: "c", Name: "tool"}, tc.res)
			if ext != "json" {
				t.Errorf("ext %q, want json", ext)
			}
			if bound := maxSpillGrowth*size + 1024; len(got) > bound {
				t.Fatalf("spill file %d bytes for a %d-byte result, want at most %d", len(got), size, bound)
			}
			if !json.Valid(got) {
				t.Errorf("the spill file is not valid JSON")
			}
			if tc.raw != "" && string(got) != tc.raw {
				t.Errorf("want the bytes as they came, got %.80q…", got)
			}
			if lines := bytes.Count(got, []byte{'\n'}); tc.pretty && lines < 100 {
				t.Errorf("a flat document should be pretty-printed, got %d lines", lines)
			}
		})
	}
}

// TestIndentedSizeBound: the bound is never below what json.Indent writes.
func TestIndentedSizeBound(t *testing.T) {
	for _, doc := range []string{`{}`, `[]`, `{"a":[1,2,{"b":"x,y:{"}],"c":{}}`, `[ 1 , [ 2 , [ 3 ] ] ]`, `{"s":"\"]}\\"}`, nestedJSON(50), lockFileJSON()} {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(doc), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got, want := indentedSizeBound([]byte(doc), 1<<40), int64(b.Len()+1); got < want {
			t.Errorf("%.40s: bound %d below the indented size %d", doc, got, want)
		}
	}
}

func lockFileJSON() string {
	var b strings.Builder
	b.WriteString(`{"packages":{`)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"node_modules/p` + strings.Repeat("x", i%7) + `":{"version":"1.0.0","dependencies":{"a":"^1"}}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestSpillNestedJSONThroughTheGuard: a nested result 80 KB deep in braces
// is spilled as it came (not as hundreds of megabytes) and previewed
// within the ceiling.
func TestSpillNestedJSONThroughTheGuard(t *testing.T) {
	ws := t.TempDir()
	payload := nestedJSON(9999)
	res := rpCall(t, &ResultPolicy{MaxBytes: 4 << 10}, rpContext(ws, "c", harness.ReadOnly, nil), "tool", "call_1", harness.TextResult(payload))
	if n := len(rpModelText(res)); n > 4<<10 {
		t.Errorf("model copy %d bytes, over the 4 KiB ceiling", n)
	}
	files := rpSpillFiles(t, ws)
	if len(files) != 1 {
		t.Fatalf("spill files %v", files)
	}
	b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(files[0])))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != payload {
		t.Errorf("spill file %d bytes, want the %d bytes as they came", len(b), len(payload))
	}
}

package workspace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// FuzzDecodeArgs checks that any arguments a model sends either decode
// into a tool's arguments, which then encode to arguments that decode the
// same, or give the error that tells the model what to send.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		``, `{}`, ` {"path":"a.go","offset":3,"limit":10} `, `{"path":"a.go"}{"path":"b"}`, `{"path":"a","x":1}`,
		`{"offset":"3"}`, `[]`, `null`, `{"path":"a"} x`, `{"offset":1e40}`, `{"path":"\ud800"}`, `{"PATH":"a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var a readArgs
		err := decodeArgs(&harness.ToolCall{Name: "read_file", Args: raw}, &a)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "arguments are not valid: ") {
				t.Fatalf("error %q does not say what is wrong", err)
			}
			return
		}
		again, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var b readArgs
		if err := decodeArgs(&harness.ToolCall{Name: "read_file", Args: again}, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s decoded to %+v, its encoding %s to %+v (%v)", raw, a, again, b, err)
		}
	})
}

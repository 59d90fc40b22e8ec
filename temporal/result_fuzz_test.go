package temporal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecodeResult checks that a journal entry either decodes to a tool
// result that encodes to an entry decoding the same, or is refused with
// an error naming its key.
func FuzzDecodeResult(f *testing.F) {
	for _, s := range []string{
		`{"content":"ok","bytes":2}`, `{}`, `null`, `[]`, `{"is_error":true,"content":"x"}`, `{"content":5}`, ``, `{"content":"a"} x`,
	} {
		f.Add([]byte(s))
	}
	k := Key{Conversation: "c", Turn: 1, Round: 2, Name: "tool:call_1"}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := decodeResult(k, b)
		if err != nil {
			if !strings.Contains(err.Error(), "journal entry") || !strings.Contains(err.Error(), "call_1") {
				t.Fatalf("error %q does not name the entry", err)
			}
			return
		}
		once, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		res2, err := decodeResult(k, once)
		if err != nil {
			t.Fatalf("%s re-encoded as %s: %v", b, once, err)
		}
		twice, err := json.Marshal(res2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%s\n%s (%v)", once, twice, err)
		}
	})
}

package recall_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/tools/recall"
)

// FuzzRecallArgs: whatever arguments the model sends, recall answers with
// a result (an error result for bad ones), never a panic, and a page is
// valid UTF-8.
func FuzzRecallArgs(f *testing.F) {
	for _, s := range []string{`{"call_id":"call_big"}`, `{"call_id":"call_big","offset":10,"limit":20}`, `{"call_id":"call_err","offset":5}`,
		`{"call_id":"call_big","offset":9223372036854775807,"limit":9223372036854775807}`, `{"call_id":"call_big","offset":3,"limit":9223372036854775807}`,
		`{"call_id":"nope"}`, `{"offset":-1}`, `[]`, `not json`, `{"call_id":"call_json","limit":1}`} {
		f.Add(s)
	}
	tool := recall.New(nil)
	f.Fuzz(func(t *testing.T, args string) {
		res := run(t, tool, conversation(), args)
		if res == nil {
			t.Fatal("no result")
		}
		if !res.IsError && !utf8.ValidString(res.FullText()) && json.Valid([]byte(args)) {
			t.Fatalf("page is not UTF-8: %q", res.FullText())
		}
	})
}

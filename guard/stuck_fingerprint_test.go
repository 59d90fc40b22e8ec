package guard

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentharness/harness"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ 1 , 2.0 , 3e0 , -0 , -0.0 , 1.5 ] } `, `{"a":[1,2,3,0,0,1.5]}`},
		{`{"a":{"d":null,"c":true}}`, `{"a":{"c":true,"d":null}}`},
		{`"\u003ctag\u003e \u00e9"`, `"<tag> é"`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`1e400`, `1e400`},
		{`1.25e20`, `1.25e+20`},
		{`{"a":1} {"b":2}`, `raw:{"a":1} {"b":2}`},
		{` not json `, `raw:not json`},
		{``, `raw:`},
	} {
		if got := canonicalJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("canonicalJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRoundFingerprintIgnoresCallOrder(t *testing.T) {
	a := &harness.Round{Assistant: harness.Message{ToolCalls: []harness.ToolCall{
		{ID: "1", Name: "x", Args: json.RawMessage(`{"p":1}`)}, {ID: "2", Name: "y", Args: json.RawMessage(`{}`)}}}}
	b := &harness.Round{Assistant: harness.Message{ToolCalls: []harness.ToolCall{
		{ID: "3", Name: "y", Args: json.RawMessage(` { } `)}, {ID: "4", Name: "x", Args: json.RawMessage(`{"p":1.0}`)}}}}
	if roundFingerprint(a) != roundFingerprint(b) {
		t.Fatalf("%q != %q", roundFingerprint(a), roundFingerprint(b))
	}
	c := &harness.Round{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "5", Name: "x", Args: json.RawMessage(`{"p":2}`)}}}}
	if roundFingerprint(a) == roundFingerprint(c) {
		t.Fatal("different rounds share a fingerprint")
	}
}

// FuzzCanonicalJSON checks that canonicalisation never fails, is
// idempotent, keeps the value's meaning, and ignores key order.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"b":1,"a":[true,null,"x"]}`, `1.0`, `-0`, `"\ud800"`, `{"a":{"a":{"a":1}}}`,
		`123456789012345678901234567890`, `1e999`, "\xff", `{"a":1,}`, `[1,2,3e-7]`, `"<&>"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c := canonicalJSON(in)
		if !json.Valid(in) {
			return
		}
		if len(c) >= 4 && c[:4] == "raw:" {
			// Valid JSON the decoder refuses (too deep) falls back to raw.
			return
		}
		if !json.Valid([]byte(c)) {
			t.Fatalf("canonical form of %q is not JSON: %q", in, c)
		}
		if again := canonicalJSON([]byte(c)); again != c {
			t.Fatalf("not idempotent: %q → %q → %q", in, c, again)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal([]byte(c), &b) != nil {
			return
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q → %q", in, c)
		}
		// Re-encoding with Go's (sorted) key order gives the same form.
		re, err := json.Marshal(a)
		if err == nil && canonicalJSON(re) != c && !hasBigNumber(a) {
			t.Fatalf("key order or spelling mattered: %q vs %q", c, canonicalJSON(re))
		}
	})
}

// hasBigNumber reports a number that float64 cannot carry exactly, where
// re-encoding through float64 legitimately changes the spelling.
func hasBigNumber(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != float64(int64(x)) || x > 1e15 || x < -1e15
	case []any:
		for _, e := range x {
			if hasBigNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasBigNumber(e) {
				return true
			}
		}
	}
	return false
}

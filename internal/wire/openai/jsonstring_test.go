package openai

import (
	"encoding/json"
	"testing"
)

// TestString: a JSON string reads as what it holds, null and nothing as
// "", any other value not at all.
func TestString(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{``, "", true},
		{`null`, "", true},
		{`""`, "", true},
		{`"{\"command\":\"ls\"}"`, `{"command":"ls"}`, true},
		{`"\u00e9"`, "é", true},
		{`{"command":"ls"}`, "", false},
		{`7`, "", false},
		{`"unterminated`, "", false},
	} {
		got, ok := String(json.RawMessage(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}

// TestToolCallArguments: a call's arguments keep what was sent, the JSON
// string of the API or the object some recorders store.
func TestToolCallArguments(t *testing.T) {
	var calls []ToolCall
	body := `[{"index":1,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"b","function":{"name":"g","arguments":{"y":2}}}]`
	if err := json.Unmarshal([]byte(body), &calls); err != nil {
		t.Fatal(err)
	}
	if s, ok := String(calls[0].Function.Arguments); !ok || s != `{"x":1}` || calls[0].Index != 1 || calls[0].Type != "function" {
		t.Errorf("string arguments: %+v", calls[0])
	}
	if string(calls[1].Function.Arguments) != `{"y":2}` {
		t.Errorf("object arguments: %s", calls[1].Function.Arguments)
	}
}

// FuzzString: String never panics, and what it accepts is what
// encoding/json decodes into a string.
func FuzzString(f *testing.F) {
	for _, s := range []string{``, `null`, `""`, `"a\"b"`, `{"a":1}`, `7`, `"\ud800"`, `"x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := String(json.RawMessage(raw))
		if raw == "" {
			if !ok || got != "" {
				t.Fatalf("nothing: %q %v", got, ok)
			}
			return
		}
		var want string
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("%q: %q %v, encoding/json %q %v", raw, got, ok, want, wantOK)
		}
	})
}

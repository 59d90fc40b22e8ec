package replay

import (
	"encoding/json"
	"testing"
)

// FuzzParseToolSpecs: any bytes given as tool schemas are read or refused
// with an error, never a panic; every tool read has a name and a schema
// that is JSON.
func FuzzParseToolSpecs(f *testing.F) {
	for _, s := range []string{
		`[{"name":"read","description":"Read","input_schema":{"type":"object"}}]`,
		`[{"type":"function","function":{"name":"ls","parameters":{"type":"object"}}}]`,
		`{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{}}}]}`,
		`[{"name":""}]`, `[{}]`, `[null]`, `{"tools":null}`, `[]`, `{`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := ParseToolSpecs(data)
		if err != nil {
			return
		}
		for _, s := range specs {
			if s.Name == "" {
				t.Fatalf("a tool without a name from %q", data)
			}
			if len(s.InputSchema) > 0 && !json.Valid(s.InputSchema) {
				t.Fatalf("schema %q is not JSON", s.InputSchema)
			}
		}
	})
}

// FuzzParseStamp: a recorded timestamp is read or taken as the zero time,
// and one read prints back to the same instant.
func FuzzParseStamp(f *testing.F) {
	for _, s := range []string{"2026-12-05T11:07:00Z", "2026-12-05T11:07:00.123456789+02:00", "", "yesterday", "2026-13-40T99:99:99Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts := parseStamp(s)
		if ts.IsZero() {
			return
		}
		if again := parseStamp(ts.Format("2006-01-02T15:04:05.999999999Z07:00")); !again.Equal(ts) {
			t.Fatalf("%q → %v → %v", s, ts, again)
		}
	})
}

package toolschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/toolschema"
)

// TestBytesIsTheSpecsJSON checks that Bytes counts what a model is sent of
// a harness.ToolSpec, its JSON, and falls back to the raw sizes when the
// schema is not JSON.
func TestBytesIsTheSpecsJSON(t *testing.T) {
	for _, spec := range []harness.ToolSpec{
		{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "now", Description: "The time."},
		{Name: "écrire", Description: "Écrit <un> fichier & \"rend\" ok", InputSchema: json.RawMessage(`{"type":"object"}`), Risk: harness.Destructive},
	} {
		want, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolschema.Bytes(spec.Name, spec.Description, spec.InputSchema); got != len(want) {
			t.Errorf("%s: Bytes = %d, the spec's JSON is %d bytes", spec.Name, got, len(want))
		}
	}
	bad := json.RawMessage(`{"type":`)
	if got, want := toolschema.Bytes("x", "yz", bad), 1+2+len(bad); got != want {
		t.Errorf("an invalid schema: Bytes = %d, want the raw sizes %d", got, want)
	}
}

func TestNoteCarriesTheSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["q"]}`)
	for _, why := range []string{toolschema.ShortForm, toolschema.NotOffered} {
		n := toolschema.Note(why, schema)
		if !strings.Contains(n, string(schema)) || !strings.Contains(n, why) || !strings.HasSuffix(n, "call again.") {
			t.Errorf("Note(%q) = %q", why, n)
		}
	}
}

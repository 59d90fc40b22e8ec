package policy

import (
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
)

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

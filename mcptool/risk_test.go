package mcptool

import (
	"testing"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRiskFromAnnotations(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		a    *mcp.ToolAnnotations
		want harness.Risk
	}{
		{"none", nil, harness.Destructive},
		{"empty (spec defaults: destructive, open world)", &mcp.ToolAnnotations{}, harness.Destructive | harness.Network},
		{"read-only closed", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}, harness.ReadOnly},
		{"read-only open world", &mcp.ToolAnnotations{ReadOnlyHint: true}, harness.ReadOnly | harness.Network},
		{"read-only ignores destructive", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}, harness.ReadOnly},
		{"destructive idempotent", &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}, harness.Destructive | harness.Idempotent},
		{"additive idempotent", &mcp.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}, harness.Idempotent},
		{"additive repeating", &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}, harness.Destructive},
		{"open world write", &mcp.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes}, harness.Idempotent | harness.Network},
	} {
		if got := riskFromAnnotations(tc.a); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

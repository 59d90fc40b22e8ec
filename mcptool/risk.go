package mcptool

import (
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// riskFromAnnotations derives a tool's risk from its MCP annotations,
// following the defaults of the MCP specification:
//
//   - no annotations → Destructive (the safe default: nothing is known);
//   - readOnlyHint → ReadOnly (destructiveHint and idempotentHint are then
//     meaningless, as the specification says);
//   - otherwise destructiveHint (default true) → Destructive, and
//     idempotentHint → Idempotent; a write that is neither (additive and
//     not idempotent) is Destructive too, because Risk has no weaker flag
//     for a write that repeats its effect;
//   - openWorldHint (default true) → also Network.
func riskFromAnnotations(a *mcp.ToolAnnotations) harness.Risk {
	if a == nil {
		return harness.Destructive
	}
	var r harness.Risk
	switch {
	case a.ReadOnlyHint:
		r = harness.ReadOnly
	case a.DestructiveHint == nil || *a.DestructiveHint:
		r = harness.Destructive
		if a.IdempotentHint {
			r |= harness.Idempotent
		}
	case a.IdempotentHint:
		r = harness.Idempotent
	default:
		r = harness.Destructive
	}
	if a.OpenWorldHint == nil || *a.OpenWorldHint {
		r |= harness.Network
	}
	return r
}

// parseRisk parses a risk written in a config: flags joined by "|", "," or
// "+", each one of read-only (readonly, read_only), idempotent,
// destructive, network. It accepts what harness.Risk.String prints.
func parseRisk(s string) (harness.Risk, error) {
	var r harness.Risk
	fields := strings.FieldsFunc(s, func(c rune) bool { return c == '|' || c == ',' || c == '+' || c == ' ' })
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty risk %q", s)
	}
	for _, f := range fields {
		switch strings.ToLower(f) {
		case "read-only", "readonly", "read_only":
			r |= harness.ReadOnly
		case "idempotent":
			r |= harness.Idempotent
		case "destructive":
			r |= harness.Destructive
		case "network":
			r |= harness.Network
		default:
			return 0, fmt.Errorf("unknown risk %q in %q (use read-only, idempotent, destructive, network)", f, s)
		}
	}
	return r, nil
}

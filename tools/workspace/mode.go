package workspace

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
)

// Mode is a permission mode: which tools are offered and which calls need
// approval. It implements flag.Value, so a CLI can bind it with flag.Var.
type Mode int

// The permission modes.
const (
	// ModeAsk offers every tool and asks an approver before each
	// Destructive or Network call (and each call to a tool without risk
	// flags). It is the zero value: a caller who sets nothing gets the
	// careful mode.
	ModeAsk Mode = iota
	// ModeAuto offers every tool and runs every call without asking.
	ModeAuto
	// ModeReadOnly offers only read-only tools; anything else that reaches
	// the approver anyway is refused.
	ModeReadOnly
)

// String returns the mode's flag spelling: "ask", "auto" or "read-only".
func (m Mode) String() string {
	switch m {
	case ModeAsk:
		return "ask"
	case ModeAuto:
		return "auto"
	case ModeReadOnly:
		return "read-only"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "ask", "auto" or "read-only" (also "readonly", "ro").
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ask":
		return ModeAsk, nil
	case "auto":
		return ModeAuto, nil
	case "read-only", "readonly", "read_only", "ro":
		return ModeReadOnly, nil
	}
	return 0, fmt.Errorf("unknown permission mode %q: want read-only, auto or ask", s)
}

// Set parses s into m, for flag.Var.
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// requireApproval wraps a tool of an ask-mode workspace that the agent
// asks about (see ApproverFor): it runs only when the call carries the
// agent's approval (harness.CallInfo.Approved). An agent without an
// Approver never asks, so without this an ask-mode workspace would write
// unasked; a mode that asks must refuse when nobody can answer.
func requireApproval(name string, next harness.ToolFunc) harness.ToolFunc {
	return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
		if info, ok := harness.CallInfoFrom(ctx); !ok || !info.Approved {
			return failf(name, "refused: the workspace is in ask mode and nobody approved this call "+
				"(the agent has no approver to ask). Do not repeat it; continue with the read-only tools or ask the user."), nil
		}
		return next(ctx, call)
	}
}

// filterByMode returns the tools mode offers: in ModeReadOnly only tools
// whose risk is read-only (ReadOnly set, neither Destructive nor Idempotent;
// a ReadOnly|Network tool stays, since it changes nothing), otherwise all of
// them. The order is kept; the input is not modified.
func filterByMode(tools []harness.Tool, mode Mode) []harness.Tool {
	out := make([]harness.Tool, 0, len(tools))
	for _, t := range tools {
		if mode == ModeReadOnly && !t.Spec.Risk.IsReadOnly() {
			continue
		}
		out = append(out, t)
	}
	return out
}

// ApproverFor returns the agent's Approver for mode. The agent calls it
// before every call that is not plainly read-only (Destructive, Network, or
// no risk flags at all).
//   - ModeAuto: nil, so nothing is asked and every call runs.
//   - ModeAsk: ask; when ask is nil, every such call is refused, because
//     a careful mode that cannot ask must not run them.
//   - ModeReadOnly: calls to tools that are not read-only are refused
//     without asking (they should not have been offered); a read-only
//     Network call goes to ask, or is refused when ask is nil.
func ApproverFor(mode Mode, ask harness.Approver) harness.Approver {
	switch mode {
	case ModeAuto:
		return nil
	case ModeReadOnly:
		return func(ctx context.Context, call harness.ToolCall, spec harness.ToolSpec) (bool, error) {
			if !spec.Risk.IsReadOnly() || ask == nil {
				return false, nil
			}
			return ask(ctx, call, spec)
		}
	}
	if ask == nil {
		return func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) { return false, nil }
	}
	return ask
}

package proxy

import (
	"context"
	"fmt"

	"github.com/agentharness/harness"
)

// decider decides the model copy of a tool result the proxy sees for the
// first time. It is the one seam between the proxy and the policy code:
// today the per-call guards through harness.Chain, later the round
// engine's "admit a tool result" step, with no other file changing.
type decider interface {
	decide(ctx context.Context, in *admission) (*harness.ToolResult, error)
}

// admission is one new tool result and where it stands.
type admission struct {
	Call harness.ToolCall
	Text string
	// IsError is the client's is_error flag.
	IsError bool
	// Page is the spill file the call reads, when it reads one: the
	// result is then a page of an earlier spill and is not spilled again.
	Page string
	// Info is what guards read: the conversation, turn and round, the spill
	// workspace, the transcript so far and the message that made the call.
	Info harness.CallInfo
}

// guardDecider runs a result through per-call guards, exactly as the agent
// and the replay engine do: the recorded result is what the "tool"
// returns, the guards write its model copy and cuts.
type guardDecider struct {
	guards []harness.Guard
}

func (d *guardDecider) decide(ctx context.Context, in *admission) (*harness.ToolResult, error) {
	recorded := func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		res := &harness.ToolResult{CallID: c.ID, Tool: c.Name, IsError: in.IsError, Parts: []harness.Part{harness.TextPart(in.Text)}}
		res.Bytes = res.PayloadSize()
		if in.Page != "" {
			res.Meta = map[string]any{"path": in.Page}
		}
		return res, nil
	}
	call := in.Call
	res, err := harness.Chain(recorded, d.guards...)(harness.WithCallInfo(ctx, in.Info), &call)
	if err != nil {
		return nil, fmt.Errorf("proxy: guards on %s: %w", call.ID, err)
	}
	if res == nil || res.Stream != nil {
		return nil, fmt.Errorf("proxy: a guard returned no result for %s", call.ID)
	}
	res.CallID, res.Tool = call.ID, call.Name
	if res.Bytes == 0 {
		res.Bytes = res.PayloadSize()
	}
	return res, nil
}

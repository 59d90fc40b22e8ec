package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/stack"
)

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

// proxyStack is the default stack as the proxy runs it: cfg (nil is the
// default) with the ceilings spilling under workspace unless cfg names
// their own spill store, so the preview's locator is an absolute path the
// agent's file tools can read. The proxy admits results one by one, so it
// takes the stack's per-call guards; of the per-turn policies it keeps the
// turn budget's settings (applied on arrival, see budget.go) and leaves
// out the stuck verdict (the client's loop owns its rounds), compaction
// (it would rewrite bytes already forwarded; only its idle clear runs,
// once the upstream's cache has expired: see idle.go) and recall (the
// client's tools are the client's).
func proxyStack(cfg *stack.Config, workspace string) (*stack.Stack, stack.Config) {
	var c stack.Config
	if cfg != nil {
		c = *cfg
	}
	ceiling := guard.ResultPolicy{}
	if c.Ceiling != nil {
		ceiling = *c.Ceiling
	}
	if ceiling.Store == nil {
		ceiling.Store = SpillStore(workspace)
	}
	c.Ceiling = &ceiling
	// No recall tool behind the proxy: what Collapse and the turn budget
	// take is named by a spill file in the ceiling's store.
	collapse := guard.Collapse{}
	if c.Collapse != nil {
		collapse = *c.Collapse
	}
	if collapse.Spill == nil {
		collapse.Spill = ceiling.Store
	}
	c.Collapse = &collapse
	run := guard.RunCeiling{}
	if c.RunCeiling != nil {
		run = *c.RunCeiling
	}
	if run.Store == nil {
		run.Store = ceiling.Store
	}
	c.RunCeiling = &run
	c.NoStuck, c.NoCompact, c.NoRecall = true, true, true
	return stack.New(&c), c
}

// newEngine returns the round engine the proxy admits results through:
// the stack's per-call guards, nothing else (the client runs the tools
// and calls the model).
func newEngine(s *stack.Stack, workspace string) (*harness.Engine, error) {
	eng, err := harness.NewEngine(&harness.Options{Guards: s.Guards, Workspace: workspace})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return eng, nil
}

// decide admits a result the proxy sees for the first time through the
// engine, exactly as the agent and the replay do: the client's result is
// what the "tool" returns (harness.Returning), the engine's guards write
// its model copy and cuts.
func (p *Proxy) decide(ctx context.Context, in *admission) (*harness.ToolResult, error) {
	sent := &harness.ToolResult{CallID: in.Call.ID, Tool: in.Call.Name, IsError: in.IsError, Parts: []harness.Part{harness.TextPart(in.Text)}}
	fn := harness.Returning(sent)
	if in.Page != "" {
		returning := fn
		fn = func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := returning(ctx, c)
			if err == nil {
				res.Meta = map[string]any{"path": in.Page}
			}
			return res, err
		}
	}
	res := p.engine.Admit(ctx, in.Info, in.Call, fn)
	if res == nil || res.Stream != nil {
		return nil, errors.New("proxy: the engine returned no result for " + in.Call.ID)
	}
	return res, nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/mcpflags"
	"github.com/agentharness/harness/internal/stackflags"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/tokens"
	"github.com/agentharness/harness/tools/recall"
	"github.com/agentharness/harness/tools/workspace"
)

// engineFlags are the worker's engine: its model, workspace tools and
// system prompt, the default stack with harness run's switches for it
// (stackflags: the same names, defaults and checks), and harness run's
// MCP switches (mcpflags), so that a durable turn offers the tools a turn
// of harness run offers and is bounded as it is.
type engineFlags struct {
	model, root, mode, sys string
	yes, shell             bool
	maxRounds              int
	toolTimeout            time.Duration
	mcp                    mcpflags.Flags
	stackflags.Flags
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "", "scripted:FILE, openai:MODEL or anthropic:MODEL (required)")
	fs.StringVar(&f.root, "workspace", ".", "workspace root: the tools are jailed to it and spill files go under its .harness/ (every worker of a queue must see the same one)")
	fs.StringVar(&f.mode, "mode", "read-only", "workspace mode (see harness tools): which calls run without approval")
	fs.BoolVar(&f.yes, "yes", false, "approve every call the mode offers (a worker has no terminal to ask on)")
	fs.BoolVar(&f.shell, "shell", false, "offer the shell tool (bash in the workspace; unlike the file tools, not confined to it); it needs approval\n"+
		"unless --mode auto, so without --yes a worker refuses its calls")
	fs.StringVar(&f.sys, "system", "You are a careful assistant working in a workspace through tools.", "system prompt")
	fs.IntVar(&f.maxRounds, "max-rounds", harness.DefaultMaxRounds, "tool rounds per turn before the synthesis call")
	fs.DurationVar(&f.toolTimeout, "tool-timeout", harness.DefaultToolTimeout, "time limit of one tool call (keep it below the turn's step timeout)")
	f.Register(fs)
	f.mcp.Register(fs)
}

// check refuses flags buildEngine would refuse for their form, before the
// worker opens or creates anything.
func (f *engineFlags) check() error {
	if err := f.Check(); err != nil {
		return stackflags.AsUsage(err, errUsage)
	}
	if _, err := workspace.ParseMode(f.mode); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if provider, name, ok := strings.Cut(f.model, ":"); !ok || name == "" || !knownProvider(provider) {
		return fmt.Errorf("%w: --model %q: want scripted:FILE, openai:MODEL or anthropic:MODEL", errUsage, f.model)
	}
	return nil
}

// workerEngine is what a worker runs turns with.
type workerEngine struct {
	engine *harness.Engine
	// model answers the requests: the --model, calibrated for a
	// provider's model.
	model harness.Model
	// close stops the MCP servers and releases the workspace tools.
	close func()
}

// mcpClient names the worker to the MCP servers it starts.
func mcpClient() mcpflags.Client {
	return mcpflags.Client{Name: "harness-temporal"} // the servers see version "dev"
}

// buildEngine builds the engine f describes, recording into st: the
// workspace tools and the default stack as harness run builds it (the
// ceiling and run ceiling spilling under the workspace's .harness/,
// Collapse, stuck detection, the turn budget, compaction and the recall
// tool reading st), plus the tools of the MCP servers the flags name
// (their warnings on warn) and the per-turn tool selector unless
// --all-tools. Budgets count with o200k; for a provider's model a
// calibrator learns how far its tokenizer is from o200k, from the usage
// it reports. The calibration and the token memos are this worker's and
// only save work: what compaction decided is in st (its notes), so every
// worker renders the same view of a turn.
func buildEngine(ctx context.Context, f *engineFlags, st store.Store, warn io.Writer) (*workerEngine, error) {
	counter, err := tokens.O200k()
	if err != nil {
		return nil, err
	}
	m, err := newModel(f.model, counter)
	if err != nil {
		return nil, err
	}
	provider, modelName, _ := strings.Cut(f.model, ":")
	cache, cal := tokens.NewCache(counter, nil), tokens.NewCalibrator()
	if provider != "scripted" {
		m = tokens.Calibrate(m, modelName, cache, cal)
	}
	sc, err := f.stack(modelName, m, cache, cal)
	if err != nil {
		return nil, err
	}
	sc.Recall = &recall.Options{Lookup: st.FullResult}
	wsMode, err := workspace.ParseMode(f.mode)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	root, err := filepath.Abs(f.root)
	if err != nil {
		return nil, fmt.Errorf("--workspace: %w", err)
	}
	ws, err := workspace.New(root, &workspace.Options{Mode: wsMode, Shell: f.shell, ShellTimeout: workspace.ShellTimeoutUnder(f.toolTimeout)})
	if err != nil {
		return nil, err
	}
	ask := func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) { return f.yes, nil }
	opts := &harness.Options{System: f.sys, Tools: ws.Tools(), MaxRounds: f.maxRounds, ToolTimeout: f.toolTimeout,
		Approver: workspace.ApproverFor(wsMode, ask), Recorder: st, Observer: st.Observe, Workspace: root}
	stack.New(&sc).Apply(opts)
	mcpTools, stopMCP, err := f.mcp.Open(ctx, warn, mcpClient(), root, opts.Tools, wsMode == workspace.ModeReadOnly, f.toolTimeout)
	if err != nil {
		ws.Close()
		return nil, err
	}
	closeAll := func() { stopMCP(); ws.Close() }
	if opts.Selector, err = f.mcp.Selector(opts.Tools); err != nil {
		closeAll()
		return nil, err
	}
	opts.Tools = append(opts.Tools, mcpTools...)
	eng, err := harness.NewEngine(opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	return &workerEngine{engine: eng, model: m, close: closeAll}, nil
}

// stack returns the stack the flags describe (stackflags.Flags.Config):
// with every flag at its default, the default stack with the model,
// counter, calibrator and summarizer given to compaction, as harness run
// builds it.
func (f *engineFlags) stack(modelName string, summarizer harness.Model, counter tokens.Counter, cal *tokens.Calibrator) (stack.Config, error) {
	if err := f.check(); err != nil {
		return stack.Config{}, err
	}
	c, err := f.Config(modelName, summarizer, counter, cal)
	return c, stackflags.AsUsage(err, errUsage)
}

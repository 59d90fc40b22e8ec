package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/mcpflags"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/tokens"
)

// runConfig holds the flags of "harness run".
type runConfig struct {
	model       string
	baseURL     string
	workspace   string
	system      string
	maxRounds   int
	toolTimeout time.Duration
	jsonOut     bool
	events      bool
	stream      bool

	// conversation resumes a stored conversation; db is the store's file
	// (default WORKSPACE/.harness/harness.db); noStore records nothing.
	conversation string
	db           string
	noStore      bool

	keepToolsOnFinal bool

	policy policyFlags
	tools  toolFlags
	mcp    mcpflags.Flags

	// countTokens counts tokens for models that report none (scripted).
	countTokens tokens.Counter
}

const defaultSystem = "You are a careful assistant working in a workspace through tools. " +
	"Read before you answer, cite what you found, and say so when a result was cut."

func cmdRun(ctx context.Context, e *env, args []string) error {
	if wantsTemporal(args) {
		return execTemporal(ctx, e, "run", args)
	}
	cfg, prompt, err := parseRun(e, args)
	if err != nil {
		return err
	}
	r, err := openRun(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer r.close()
	res, runErr := r.agent.Run(ctx, r.conv, prompt)
	if err := r.print(res); err != nil {
		return err
	}
	return runErr
}

// parseRun reads the flags and the prompt of "harness run", and resolves
// the workspace root.
func parseRun(e *env, args []string) (*runConfig, string, error) {
	cfg := &runConfig{}
	fs := newFlagSet(e, "run", "PROMPT", "Run one agent turn on PROMPT (\"-\" reads it from standard input), print the answer on\n"+
		"standard output and a one-line usage summary on standard error.")
	fs.StringVar(&cfg.model, "model", "", modelSpecHelp)
	fs.StringVar(&cfg.baseURL, "base-url", "", "API root of an openai or anthropic model (default $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL, else the provider's own)")
	fs.StringVar(&cfg.workspace, "workspace", ".", "workspace root: tools are jailed to it and spill files go under its .harness/")
	fs.StringVar(&cfg.system, "system", defaultSystem, "system prompt")
	fs.IntVar(&cfg.maxRounds, "max-rounds", harness.DefaultMaxRounds, "tool rounds per turn before the synthesis call")
	fs.DurationVar(&cfg.toolTimeout, "tool-timeout", harness.DefaultToolTimeout, "time limit of one tool call")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the result as JSON on standard output instead of the answer")
	fs.BoolVar(&cfg.events, "events", false, "print every event as a JSON line on standard error")
	fs.BoolVar(&cfg.stream, "stream", false, "print the model's text on standard output as it arrives, every round's (default: the answer alone, once the turn ends)")
	fs.StringVar(&cfg.conversation, "conversation", "", "continue this stored conversation (ids: harness log list)")
	fs.StringVar(&cfg.db, "db", "", "transcript store: a file (default WORKSPACE/.harness/harness.db) or a postgres:// URL")
	fs.BoolVar(&cfg.noStore, "no-store", false, "do not record the conversation in the transcript store")
	fs.BoolVar(&cfg.keepToolsOnFinal, "keep-tools-on-final", false, "keep the tool schemas (calls forbidden) in the synthesis request, so it hits the prompt cache")
	cfg.policy.register(fs)
	cfg.tools.register(fs)
	cfg.mcp.Register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, "", err
	}
	if cfg.model == "" {
		return nil, "", fmt.Errorf("%w: --model is required (%s)", errUsage, modelSpecHelp)
	}
	prompt, err := readPrompt(e, pos)
	if err != nil {
		return nil, "", err
	}
	root, err := filepath.Abs(cfg.workspace)
	if err != nil {
		return nil, "", fmt.Errorf("--workspace: %w", err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("--workspace %s: not a directory", cfg.workspace)
	}
	cfg.workspace = root
	return cfg, prompt, nil
}

// run is one "harness run": the agent, the conversation it continues,
// and what it prints.
type run struct {
	e     *env
	cfg   *runConfig
	agent *harness.Agent
	conv  *harness.Conversation
	st    store.DB
	out   *runOutput
	// closers release the workspace tools, the MCP servers and the store,
	// in reverse order.
	closers []func()
}

// openRun builds the agent cfg describes: the model, the default stack
// as the flags change it, the workspace and MCP tools, and the store.
func openRun(ctx context.Context, e *env, cfg *runConfig) (*run, error) {
	r := &run{e: e, cfg: cfg, out: &runOutput{e: e, events: cfg.events}}
	if err := r.open(ctx); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *run) open(ctx context.Context) error {
	e, cfg := r.e, r.cfg
	model, sc, err := runModel(ctx, e, cfg)
	if err != nil {
		return err
	}
	ws, wsTools, approver, err := cfg.tools.build(e, cfg.workspace, cfg.toolTimeout)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, func() { ws.Close() })
	if r.st, r.conv, err = openRunStore(ctx, cfg); err != nil {
		return err
	}
	r.closers = append(r.closers, func() { closeRunStore(e, r.st) })
	sc.Recall = recallOptions(r.st)
	opts := &harness.Options{Tools: wsTools, Approver: approver, System: cfg.system, MaxRounds: cfg.maxRounds,
		ToolTimeout: cfg.toolTimeout, Workspace: cfg.workspace, KeepToolsOnFinal: cfg.keepToolsOnFinal}
	stack.New(&sc).Apply(opts)
	mcpTools, stopMCP, err := cfg.mcp.Open(ctx, e.stderr, mcpClient(), cfg.workspace, opts.Tools, readOnlyMode(&cfg.tools), cfg.toolTimeout)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, stopMCP)
	if opts.Selector, err = cfg.mcp.Selector(opts.Tools); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	opts.Tools = append(opts.Tools, mcpTools...)
	r.out.attach(opts, cfg.stream && !cfg.jsonOut)
	provider, modelName, _ := strings.Cut(cfg.model, ":")
	withTelemetry, stopTelemetry, err := telemetryFromEnv(ctx, e, provider, modelName)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, stopTelemetry)
	opts.Observer = withTelemetry(opts.Observer)
	if r.st != nil {
		next, st := opts.Observer, r.st
		opts.Recorder, opts.Observer = st, func(e harness.Event) {
			st.Observe(e)
			if next != nil {
				next(e)
			}
		}
	}
	r.agent, err = harness.New(model, opts)
	return err
}

// runModel opens the model of cfg and the stack its flags describe.
// Budgets count with o200k; for a provider's model the calibrator learns
// how far its own tokenizer is from o200k, from the usage it reports.
func runModel(ctx context.Context, e *env, cfg *runConfig) (harness.Model, stack.Config, error) {
	counter, err := tokens.O200k()
	if err != nil {
		return nil, stack.Config{}, err
	}
	cfg.countTokens = counter
	model, err := newModel(ctx, e, cfg)
	if err != nil {
		return nil, stack.Config{}, err
	}
	provider, modelName, _ := strings.Cut(cfg.model, ":")
	cache, cal := tokens.NewCache(counter, nil), tokens.NewCalibrator()
	if provider != "scripted" {
		model = tokens.Calibrate(model, modelName, cache, cal)
	}
	sc, err := cfg.policy.config(modelName, model, cache, cal)
	return model, sc, err
}

func (r *run) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// print writes the turn's answer (unless it was streamed) or its JSON, the
// usage line and where the conversation is stored.
func (r *run) print(res *harness.Result) error {
	e := r.e
	if r.cfg.jsonOut {
		if err := writeResultJSON(e.stdout, r.conv, res); err != nil {
			return err
		}
	} else if res.Answer != "" && !r.out.streamed {
		fmt.Fprintln(e.stdout, res.Answer)
	}
	fmt.Fprintln(e.stderr, usageLine(res))
	if r.st != nil {
		id := r.conv.ID
		fmt.Fprintf(e.stderr, "conversation %s (continue it with --conversation %s; inspect it with harness log show %s%s)\n", id, id, id, storeArgs(r.cfg.workspace, r.cfg.db))
	}
	return nil
}

// runOutput prints a run as it goes: streamed text, and every event as a
// JSON line with --events.
type runOutput struct {
	e      *env
	events bool

	mu                  sync.Mutex
	streamed, midStream bool
}

// attach sets opts' observer and, when stream is set, its text callback.
func (o *runOutput) attach(opts *harness.Options, stream bool) {
	enc := json.NewEncoder(o.e.stderr)
	opts.Observer = func(ev harness.Event) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if ev.Kind == harness.EventResponse && o.midStream {
			// Each round's streamed text ends its own line.
			fmt.Fprintln(o.e.stdout)
			o.midStream = false
		}
		if o.events {
			_ = enc.Encode(ev)
		} else {
			printWarning(o.e.stderr, ev)
		}
	}
	if stream {
		opts.OnText = func(s string) {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.streamed, o.midStream = true, true
			io.WriteString(o.e.stdout, s)
		}
	}
}

// readPrompt joins the positional arguments, or reads standard input for "-".
func readPrompt(e *env, pos []string) (string, error) {
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return "", fmt.Errorf("reading the prompt: %w", err)
		}
		pos = []string{string(b)}
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if prompt == "" {
		return "", fmt.Errorf("%w: no prompt (give it as an argument, or \"-\" to read standard input)", errUsage)
	}
	return prompt, nil
}

// usageLine is the one-line summary of a turn, from computed figures only.
func usageLine(r *harness.Result) string {
	u := r.Usage
	return fmt.Sprintf("usage: outcome %s; %d requests, %d tool rounds; tokens in %d (cached %d), out %d, effective %.1f; evidence %d chars (peak request %d); tool schemas sent %d (%d bytes)%s",
		r.Outcome, r.Requests, r.ToolRounds, u.Input, u.Cached, u.Output, u.Effective(),
		r.EvidenceChars, r.PeakEvidenceChars, r.ToolSchemas, r.ToolSchemaBytes, cutSummary(r.Turn))
}

// cutSummary counts the turn's results and what the per-call guards did to
// them, for example "; 5 results, 2 cut (1 spilled, 1 deduped)".
func cutSummary(t *harness.Turn) string {
	if t == nil {
		return ""
	}
	results, cut := 0, 0
	kinds := map[harness.CutKind]int{}
	for _, r := range t.Rounds {
		for _, res := range r.Results {
			results++
			if len(res.Cuts) > 0 {
				cut++
				kinds[res.Cuts[len(res.Cuts)-1].Kind]++
			}
		}
	}
	if results == 0 {
		return ""
	}
	out := fmt.Sprintf("; %d results, %d cut", results, cut)
	var parts []string
	for _, k := range []harness.CutKind{harness.CutSpilled, harness.CutTruncated, harness.CutDeduped} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	return out
}

// writeResultJSON prints the turn's result with its figures.
func writeResultJSON(w io.Writer, conv *harness.Conversation, r *harness.Result) error {
	out := struct {
		Conversation      string          `json:"conversation"`
		Turn              int             `json:"turn"`
		Outcome           harness.Outcome `json:"outcome"`
		Answer            string          `json:"answer"`
		Usage             harness.Usage   `json:"usage"`
		Effective         float64         `json:"effective_tokens"`
		Requests          int             `json:"requests"`
		ToolRounds        int             `json:"tool_rounds"`
		EvidenceChars     int             `json:"evidence_chars"`
		PeakEvidenceChars int             `json:"peak_evidence_chars"`
		ToolSchemas       int             `json:"tool_schemas"`
		ToolSchemaBytes   int             `json:"tool_schema_bytes"`
	}{
		Conversation: conv.ID, Outcome: r.Outcome, Answer: r.Answer, Usage: r.Usage, Effective: r.Usage.Effective(),
		Requests: r.Requests, ToolRounds: r.ToolRounds, EvidenceChars: r.EvidenceChars,
		PeakEvidenceChars: r.PeakEvidenceChars, ToolSchemas: r.ToolSchemas, ToolSchemaBytes: r.ToolSchemaBytes,
	}
	if r.Turn != nil {
		out.Turn = r.Turn.Index
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}

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
	"github.com/agentharness/harness/tokens"
	"github.com/agentharness/harness/tools/recall"
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
	mcp    mcpFlags

	// countTokens counts tokens for models that report none (scripted).
	countTokens func(string) int
}

const defaultSystem = "You are a careful assistant working in a workspace through tools. " +
	"Read before you answer, cite what you found, and say so when a result was cut."

func cmdRun(ctx context.Context, e *env, args []string) error {
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
	fs.StringVar(&cfg.db, "db", "", "transcript store file (default WORKSPACE/.harness/harness.db)")
	fs.BoolVar(&cfg.noStore, "no-store", false, "do not record the conversation in the transcript store")
	fs.BoolVar(&cfg.keepToolsOnFinal, "keep-tools-on-final", false, "keep the tool schemas (calls forbidden) in the synthesis request, so it hits the prompt cache")
	cfg.policy.register(fs)
	cfg.tools.register(fs)
	cfg.mcp.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if cfg.model == "" {
		return fmt.Errorf("%w: --model is required (%s)", errUsage, modelSpecHelp)
	}
	prompt, err := readPrompt(e, pos)
	if err != nil {
		return err
	}
	root, err := filepath.Abs(cfg.workspace)
	if err != nil {
		return fmt.Errorf("--workspace: %w", err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return fmt.Errorf("--workspace %s: not a directory", cfg.workspace)
	}
	cfg.workspace = root

	counter, err := tokens.O200k()
	if err != nil {
		return err
	}
	cfg.countTokens = counter.Count
	model, err := newModel(ctx, e, cfg)
	if err != nil {
		return err
	}
	provider, modelName, _ := strings.Cut(cfg.model, ":")
	// Budgets count with o200k; the calibrator learns how far the
	// provider's own tokenizer is from it, from the usage it reports.
	cache, cal := tokens.NewCache(counter, nil), tokens.NewCalibrator(nil)
	if provider != "scripted" {
		model = tokens.Calibrate(model, modelName, cache, cal)
	}
	guards, policies, err := cfg.policy.build(modelName, model, cache, cal)
	if err != nil {
		return err
	}
	ws, wsTools, approver, err := cfg.tools.build(e, root, cfg.toolTimeout)
	if err != nil {
		return err
	}
	defer ws.Close()
	st, conv, err := openRunStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeRunStore(e, st)
	opts := &harness.Options{
		Tools:       wsTools,
		Approver:    approver,
		System:      cfg.system,
		MaxRounds:   cfg.maxRounds,
		ToolTimeout: cfg.toolTimeout,
		Workspace:   root,
		Guards:      guards,
		Policies:    policies,

		KeepToolsOnFinal: cfg.keepToolsOnFinal,
	}
	if !cfg.policy.noCompact {
		// Compaction's placeholders point at recall to get a result back.
		opts.Tools = append(opts.Tools, recall.New(recallOptions(st)))
	}
	mcpTools, stopMCP, err := cfg.mcp.open(ctx, e, root, opts.Tools, readOnlyMode(&cfg.tools))
	if err != nil {
		return err
	}
	defer stopMCP()
	opts.Tools, opts.Selector = append(opts.Tools, mcpTools...), cfg.mcp.selector()
	var (
		mu                  sync.Mutex
		streamed, midStream bool
		enc                 = json.NewEncoder(e.stderr)
	)
	opts.Observer = func(ev harness.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Kind == harness.EventResponse && midStream {
			// Each round's streamed text ends its own line.
			fmt.Fprintln(e.stdout)
			midStream = false
		}
		if cfg.events {
			_ = enc.Encode(ev)
		} else {
			printWarning(e.stderr, ev)
		}
	}
	if cfg.stream && !cfg.jsonOut {
		opts.OnText = func(s string) {
			mu.Lock()
			defer mu.Unlock()
			streamed, midStream = true, true
			io.WriteString(e.stdout, s)
		}
	}
	withTelemetry, stopTelemetry, err := telemetryFromEnv(ctx, e, provider, modelName)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	opts.Observer = withTelemetry(opts.Observer)
	if st != nil {
		opts.Recorder, opts.Observer = st, st.Observer(opts.Observer)
	}
	agent, err := harness.New(model, opts)
	if err != nil {
		return err
	}
	res, runErr := agent.Run(ctx, conv, prompt)
	if cfg.jsonOut {
		if err := writeResultJSON(e.stdout, conv, res); err != nil {
			return err
		}
	} else if res.Answer != "" {
		if !streamed {
			fmt.Fprintln(e.stdout, res.Answer)
		}
	}
	fmt.Fprintln(e.stderr, usageLine(res))
	if st != nil {
		fmt.Fprintf(e.stderr, "conversation %s (continue it with --conversation %s; inspect it with harness log show %s%s)\n", conv.ID, conv.ID, conv.ID, storeArgs(cfg.workspace, cfg.db))
	}
	if runErr != nil {
		return runErr
	}
	return nil
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
		Conversation: conv.ID, Outcome: r.Outcome, Answer: r.Answer, Usage: r.Usage, Effective: r.Effective(),
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

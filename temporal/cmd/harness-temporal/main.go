// Command harness-temporal runs harness turns on a Temporal cluster:
//
//	harness-temporal worker --temporal HOST:PORT --db FILE|postgres://URL --model SPEC [flags]
//	harness-temporal run --temporal HOST:PORT --conversation ID PROMPT
//
// "worker" polls the task queue and runs the steps of any turn, with the
// transcript in the store at --db (shared by every worker) and each step's
// output in the journal beside it; it runs session workers, so that all
// the tool steps of a turn whose session it takes run on it (a stateful
// MCP server sees every call). Its engine is harness run's: the
// workspace tools and the default stack (result ceiling with spill files
// under the workspace's .harness/, run ceiling, Collapse, stuck detection,
// turn budget, compaction, recall), with harness run's switches for them
// (one definition, internal/stackflags: --max-bytes, --no-spill, --preview,
// --run-ceiling, --no-collapse, --dedupe, --turn-budget, --no-stuck,
// --no-compact, --clear-old, --clear-when-idle, --window and the rest). "run" starts one turn, waits for it
// and prints the answer (or, with --json, the turn's figures; with
// --unpinned its tool steps run on any worker, not one). The
// harness command runs this binary for "harness worker" and "harness run
// --temporal", so the core module never compiles the Temporal SDK.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/anthropic"
	"github.com/agentharness/harness/provider/openai"
	"github.com/agentharness/harness/provider/scripted"
	htemporal "github.com/agentharness/harness/temporal"
	"github.com/agentharness/harness/tokens"
)

const usage = `usage:
  harness-temporal worker --temporal HOST:PORT --db FILE|postgres://URL --model SPEC [flags]
  harness-temporal run --temporal HOST:PORT --conversation ID [flags] PROMPT
run "harness-temporal worker -h" or "harness-temporal run -h" for the flags`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "harness-temporal:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, usage)
	}
	switch args[0] {
	case "worker":
		return cmdWorker(ctx, args[1:], stderr)
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: unknown command %q\n%s", errUsage, args[0], usage)
}

// clusterFlags are the flags of both commands.
type clusterFlags struct {
	hostPort, namespace, queue string
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.hostPort, "temporal", "", "the Temporal frontend, HOST:PORT (required)")
	fs.StringVar(&c.namespace, "namespace", "default", "the Temporal namespace")
	fs.StringVar(&c.queue, "task-queue", htemporal.DefaultTaskQueue, "the task queue of the workers")
}

func (c *clusterFlags) dial() (client.Client, error) {
	if c.hostPort == "" {
		return nil, fmt.Errorf("%w: --temporal HOST:PORT is required", errUsage)
	}
	cl, err := client.Dial(client.Options{HostPort: c.hostPort, Namespace: c.namespace})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", c.hostPort, err)
	}
	return cl, nil
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("harness-temporal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// cmdWorker runs a worker until ctx ends: the engine of buildEngine, the
// store and journal the flags name, and the activities on the task queue.
func cmdWorker(ctx context.Context, args []string, stderr io.Writer) error {
	var (
		cl          clusterFlags
		ef          engineFlags
		db, journal string
	)
	fs := newFlags("worker", stderr)
	cl.register(fs)
	ef.register(fs)
	fs.StringVar(&db, "db", "", "the transcript store shared by the workers: an SQLite FILE or a postgres:// URL (required)")
	fs.StringVar(&journal, "journal", "", "the step journal: an SQLite FILE or a postgres:// URL (default: the store's database for a URL, else the store's file + \".journal\")")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if db == "" {
		return fmt.Errorf("%w: --db is required", errUsage)
	}
	if err := ef.check(); err != nil {
		return err
	}
	if journal == "" {
		journal = db + ".journal"
		if htemporal.IsDSN(db) {
			journal = db // its own table beside the store's
		}
	}
	st, err := htemporal.OpenStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	we, err := buildEngine(ctx, &ef, st, stderr)
	if err != nil {
		return err
	}
	defer we.close()
	j, err := htemporal.OpenJournal(ctx, journal)
	if err != nil {
		return err
	}
	defer j.Close()
	c, err := cl.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, cl.queue, htemporal.WorkerOptions(worker.Options{}))
	(&htemporal.Activities{Engine: we.engine, Store: st, Model: we.model, Journal: j}).Register(w)
	fmt.Fprintf(stderr, "harness-temporal: worker on %s, task queue %q, store %s\n", cl.hostPort, cl.queue, st.Path())
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	w.Stop()
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		cl       clusterFlags
		conv     string
		asJSON   bool
		unpinned bool
	)
	fs := newFlags("run", stderr)
	cl.register(fs)
	fs.StringVar(&conv, "conversation", "", "the conversation (created on its first turn; default a new id)")
	fs.BoolVar(&asJSON, "json", false, "print the turn's figures as JSON instead of the answer")
	fs.BoolVar(&unpinned, "unpinned", false, "run the turn's tool steps on any worker of the queue instead of one (for MCP servers that keep no state between calls)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want one PROMPT argument", errUsage)
	}
	if conv == "" {
		conv = harness.NewConversation("").ID
	}
	c, err := cl.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	wr, err := htemporal.StartTurn(ctx, c, cl.queue, htemporal.TurnInput{Conversation: conv, Input: fs.Arg(0), Unpinned: unpinned})
	if err != nil {
		return err
	}
	var out htemporal.TurnOutput
	if err := wr.Get(ctx, &out); err != nil {
		return fmt.Errorf("turn of %s: %w", conv, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintln(stdout, out.Answer)
	fmt.Fprintf(stderr, "conversation %s turn %d: %s, %d rounds, %d tool calls\n", out.Conversation, out.Turn, out.Outcome, out.Rounds, out.ToolCalls)
	if out.Error != "" {
		return errors.New(out.Error)
	}
	return nil
}

// newModel maps a --model value to a model, as harness run does; counter
// counts the usage of a scripted model's steps that script none.
func newModel(spec string, counter tokens.Counter) (harness.Model, error) {
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: --model %q: want scripted:FILE, openai:MODEL or anthropic:MODEL", errUsage, spec)
	}
	switch provider {
	case "scripted":
		s, err := scripted.Load(name)
		if err != nil {
			return nil, err
		}
		return scripted.New(s, &scripted.Options{Counter: counter}), nil
	case "openai":
		return openai.New(&openai.Options{Model: name})
	case "anthropic":
		return anthropic.New(&anthropic.Options{Model: name})
	}
	return nil, fmt.Errorf("%w: --model %q: unknown provider %q", errUsage, spec, provider)
}

// knownProvider reports whether newModel knows provider.
func knownProvider(provider string) bool {
	return provider == "scripted" || provider == "openai" || provider == "anthropic"
}

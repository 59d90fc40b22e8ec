// Command harness runs LLM agent loops with bounded, honest requests, and
// replays, audits and benchmarks recorded agent transcripts.
//
// Usage:
//
//	harness <command> [flags] [arguments]
//
// Run "harness help" for the list of commands and "harness <command> -h"
// for the flags of one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// env is what a command runs with: its streams, so tests can run the CLI in
// process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// getenv reads the environment (tests substitute their own).
	getenv func(string) string
}

// command is one subcommand of the CLI.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands lists the subcommands, in the order help shows them.
func commands() []command {
	return []command{
		{"run", "run one agent turn on a prompt and print the answer and a usage line", cmdRun},
		{"worker", "run a worker of a Temporal cluster (harness-temporal worker --temporal HOST:PORT --db FILE)", cmdWorker},
		{"replay", "replay a recorded transcript under a policy preset, with no model", cmdReplay},
		{"audit", "report where recorded transcripts spent their context, and what each preset would cost", cmdAudit},
		{"bench", "compare policy presets on transcripts (or the built-in scenario suite)", cmdBench},
		{"spill", "manage spill files: gc --older-than DURATION removes old ones", cmdSpill},
		{"tools", "list the tools a run offers (workspace, recall, MCP servers) with risk and schema bytes", cmdTools},
		{"log", "list stored conversations, or show what each tool returned and what the model saw", cmdLog},
		{"proxy", "put the guards in front of any agent: a model-API proxy that decides each tool result once and records it", cmdProxy},
		{"version", "print the version of harness", cmdVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// errUsage marks an error caused by how the command was called; the exit
// code is 2, as with the flag package.
var errUsage = errors.New("usage")

// runMain runs the CLI and returns its exit code.
func runMain(ctx context.Context, args []string, e *env) int {
	if e.getenv == nil {
		e.getenv = os.Getenv
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			return runMain(ctx, []string{args[1], "-h"}, e)
		}
		usage(e.stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(e.stderr, "harness %s: %v\n", c.name, err)
			return 2
		}
		fmt.Fprintf(e.stderr, "harness %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(e.stderr, "harness: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "harness runs LLM agent loops and keeps every request to the model bounded and honest.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "  harness <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "harness <command> -h" for the flags of a command.`)
}

// newFlagSet returns a flag set whose usage text names the command and
// whose errors are returned, not printed and exited.
func newFlagSet(e *env, name, argsUsage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet("harness "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: harness %s [flags] %s\n\n%s\n\nFlags:\n", name, argsUsage, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("harness run PROMPT --model x"). Everything after "--" is positional.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(positional, tail...), nil
		}
		// fs.Parse stopped at a positional argument; keep it and go on.
		positional = append(positional, args[0])
		args = args[1:]
	}
}

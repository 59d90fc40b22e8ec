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
	"strings"
	"syscall"

	"github.com/agentharness/harness/internal/redact"
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
	return append([]command{
		{"run", "run one agent turn on a prompt and print the answer and a usage line", cmdRun},
		{"worker", "run a worker of a Temporal cluster (harness-temporal worker --temporal HOST:PORT --db FILE)", cmdWorker},
		{"replay", "replay a recorded transcript under a policy preset, with no model", cmdReplay},
		{"audit", "report where recorded transcripts spent their context, and what each preset would cost", cmdAudit},
		{"bench", "compare policy presets on transcripts (or the built-in scenario suite)", cmdBench},
		{"spill", "manage spill files: gc --older-than DURATION removes old ones", cmdSpill},
		{"tools", "list the tools a run offers (workspace, recall, MCP servers) with risk and schema bytes", cmdTools},
		{"savings", "print the tokens and dollars the proxy saved, by day, client and project", cmdSavings},
		{"log", "list stored conversations, or show what each tool returned and what the model saw", cmdLog},
		{"proxy", "put the guards in front of any agent: a model-API proxy that decides each tool result once and records it", cmdProxy},
		{"version", "print the version of harness", cmdVersion},
	}, launchCommands()...)
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
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		var status exitStatus
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &status):
			return int(status) // a launched client's exit code, passed on
		case errors.Is(err, errUsage):
			// One line: what was wrong and where the flags are listed.
			msg := redact.Text(strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
			fmt.Fprintf(e.stderr, "harness %s: %s (harness %s -h lists the flags)\n", c.name, msg, c.name)
			return 2
		}
		// An error may quote a URL with a key in its query (a *url.Error).
		fmt.Fprintf(e.stderr, "harness %s: %v\n", c.name, redact.Error(err))
		return 1
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(e.stderr, "harness: unknown command %q%s (harness help lists the commands)\n", args[0], didYouMean(args[0], names, ""))
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
// whose errors are returned, not printed and exited. Asked for (-h), the
// usage goes to standard output, as help does; see parseFlags.
func newFlagSet(e *env, name, argsUsage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet("harness "+name, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.Usage = func() {
		flags := 0
		fs.VisitAll(func(*flag.Flag) { flags++ })
		if flags == 0 {
			fmt.Fprintf(fs.Output(), "Usage: harness %s\n\n%s\n", strings.TrimSpace(name+" "+argsUsage), summary)
			return
		}
		fmt.Fprintf(fs.Output(), "Usage: harness %s\n\n%s\n\nFlags:\n", strings.TrimSpace(name+" [flags] "+argsUsage), summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("harness run PROMPT --model x"). Everything after "--" is positional.
// -h prints the usage on the flag set's output and returns flag.ErrHelp; a
// bad flag prints nothing and returns one line for the caller, naming the
// nearest flag when there is one, instead of the whole usage.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usage()
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s", errUsage, flagError(fs, err))
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

// flagError rewrites the flag package's message for an undefined flag as
// "unknown flag --modle (did you mean --model?)"; other messages stay.
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return err.Error()
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return "unknown flag --" + name + didYouMean(name, names, "--")
}

// didYouMean returns " (did you mean PREFIXx?)" naming the candidate
// closest to word — within a third of its length in edits, or one that
// starts with it — and "" when none is close.
func didYouMean(word string, candidates []string, prefix string) string {
	best, bestDist := "", len(word)/3+1
	for _, c := range candidates {
		d := editDistance(word, c)
		if strings.HasPrefix(c, word) && len(word) >= 3 {
			d = min(d, 1)
		}
		// On a tie the candidate of the typed length wins ("modle" is
		// "model" swapped, not "mode" with a letter too many).
		if d < bestDist || d == bestDist && best != "" && lenGap(c, word) < lenGap(best, word) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + prefix + best + "?)"
}

func lenGap(a, b string) int { return max(len(a)-len(b), len(b)-len(a)) }

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours each cost
// one, the typos people make in flag and command names (ASCII).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

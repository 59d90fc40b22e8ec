package guard

import (
	"context"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/shellcmd"
	"github.com/agentharness/harness/spill"
)

// DefaultRunCeilingBytes is [RunCeiling]'s default ceiling: a test log's
// command line and verdict (head and tail) with room for the lines that
// match the call.
const DefaultRunCeilingBytes = 2 << 10

// defaultRunCeilingMinBytes is [RunCeiling]'s default MinBytes: below
// it a cut saves too little to pay for what Collapse no longer saves.
const defaultRunCeilingMinBytes = 3 << 10

// RunCeiling is a [harness.Guard] factory, part of the default stack
// (stack.Config.NoRunCeiling leaves it out): a lower ceiling, with spill
// and preview as [ResultPolicy] makes them, for the output of shell
// commands that run a program (a test suite, a script, a build) rather
// than print something the agent asked to read (a file, a search, a
// listing, a diff). The agent reads such an output for its verdict and
// rarely quotes it later. Cutting them
// at arrival saves on every later request without a cache break, and
// those savings fund compaction's clears (the savings bank). An output
// of at most MinBytes stays whole: a cut a little over the ceiling saves
// a few hundred bytes and keeps a later repeat from collapsing onto it.
//
// A call is a run when its tool is a shell (Shells, default bash, shell,
// exec_command and the other names coding agents give theirs) and some
// command of its command line (split at |, ;, &, newlines; cd, variable
// assignments and timeout/time/env/nice prefixes skipped) starts a program
// that runs code: an interpreter (python, node, ruby, sh …), a test
// runner (pytest, tox, jest …), a build tool or package manager (make,
// go, cargo, npm, uv …), a linter, or a script in the working folder
// (./name). The list is positive on purpose: a program it does not name
// (cat, grep, git, curl, a tool of the agent's own) prints what the agent
// asked to see and keeps the default ceiling. Other calls pass through
// untouched, to the next guard (the stack puts it inside the result
// ceiling). A run repeated with the same output (a stuck agent
// re-running a failing test) is cut to its preview every time: the model
// saw only the first run's preview, so Collapse finds little of the repeat
// already shown, where shown whole the repeats would collapse to a line
// each.
type RunCeiling struct {
	// MaxBytes is the ceiling of a run's model copy (default
	// DefaultRunCeilingBytes; values below minMaxBytes are raised to it).
	MaxBytes int
	// MinBytes is the smallest model copy the run ceiling cuts (default
	// defaultRunCeilingMinBytes; raised to MaxBytes): an output a little
	// over the ceiling would lose a few hundred bytes for its marker and
	// its lines to Collapse, whose later repeats would find only the
	// preview to collapse onto. A streamed output is cut at MaxBytes as it
	// arrives.
	MinBytes int
	// Preview chooses what of a cut output is shown (default [Relevant]).
	Preview Preview
	// Shells names the shell tools (compared case-insensitively); nil
	// means the names coding agents give theirs (bash, shell, exec,
	// exec_command, run_command, shell_command, run_shell_command,
	// local_shell).
	Shells []string
	// NoSpill cuts without spilling (see ResultPolicy.NoSpill).
	NoSpill bool
	// Store is where a cut output is spilled (see ResultPolicy.Store);
	// nil means the call's workspace, as the result ceiling's default.
	Store spill.Store
}

// Guard returns the guard. It keeps no state between calls.
func (r *RunCeiling) Guard() harness.Guard {
	var cfg RunCeiling
	if r != nil {
		cfg = *r
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultRunCeilingBytes
	}
	shells := cfg.Shells
	if shells == nil {
		shells = shellcmd.Names()
	}
	minBytes := cfg.MinBytes
	if minBytes <= 0 {
		minBytes = defaultRunCeilingMinBytes
	}
	minBytes = max(minBytes, cfg.MaxBytes)
	inner := (&ResultPolicy{MaxBytes: cfg.MaxBytes, Preview: cfg.Preview, NoSpill: cfg.NoSpill, Store: cfg.Store}).Guard()
	return func(next harness.ToolFunc) harness.ToolFunc {
		// The ceiling wraps next, so it cuts the model copy the guards
		// inside it (Collapse) left: a run whose lines the model already
		// sees stays collapsed instead of being previewed again from its
		// full payload.
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			if call == nil || !isShellTool(call.Name, shells) || !shellcmd.RunsProgram(call.Args) {
				return next(ctx, call)
			}
			res, err := next(ctx, call)
			if err != nil || res == nil || (res.Stream == nil && resultPartsSize(res.ModelParts()) <= minBytes) {
				return res, err
			}
			return inner(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) { return res, nil })(ctx, call)
		}
	}
}

func isShellTool(name string, shells []string) bool {
	for _, s := range shells {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

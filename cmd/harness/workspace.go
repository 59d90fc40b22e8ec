package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tools/workspace"
)

// toolFlags are the flags of "harness run" that choose the workspace tools
// and who approves their calls.
type toolFlags struct {
	mode    workspace.Mode
	modeSet bool
	yes     bool
	shell   bool
}

func (f *toolFlags) register(fs *flag.FlagSet) {
	fs.Func("mode", "permission mode: read-only (offer only the read-only tools), auto (run every call), "+
		"ask (ask on the terminal before each write, edit or shell call). Default ask, or auto with --yes", func(s string) error {
		m, err := workspace.ParseMode(s)
		if err != nil {
			return err
		}
		f.mode, f.modeSet = m, true
		return nil
	})
	fs.BoolVar(&f.yes, "yes", false, "approve every call without asking")
	fs.BoolVar(&f.shell, "shell", false, "offer the shell tool (bash in the workspace; unlike the file tools, not confined to it)")
}

// build opens the workspace at root and returns it (the caller closes it),
// the tools its mode offers and the approver of their calls. When nobody
// can be asked (standard input is not a terminal) and --yes is not given,
// calls that need approval are refused and each refusal is reported on
// standard error.
func (f *toolFlags) build(e *env, root string, toolTimeout time.Duration) (*workspace.Workspace, []harness.Tool, harness.Approver, error) {
	mode := f.mode
	if !f.modeSet && f.yes {
		mode = workspace.ModeAuto
	}
	ws, err := workspace.New(root, &workspace.Options{Mode: mode, Shell: f.shell, ShellTimeout: workspace.ShellTimeoutUnder(toolTimeout)})
	if err != nil {
		return nil, nil, nil, err
	}
	var ask harness.Approver
	switch {
	case f.yes:
		ask = func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) { return true, nil }
	case isTerminal(e.stdin):
		ask = workspace.TerminalApprover(e.stdin, e.stderr)
	default:
		ask = refuseUnasked(e.stderr)
	}
	return ws, ws.Tools(), workspace.ApproverFor(mode, ask), nil
}

// isTerminal reports whether r is a terminal someone can answer on.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// refuseUnasked refuses every call and says so on w, with the way out.
func refuseUnasked(w io.Writer) harness.Approver {
	var mu sync.Mutex
	return func(_ context.Context, call harness.ToolCall, spec harness.ToolSpec) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "harness: refused %s (%s): no terminal to ask for approval; pass --yes or --mode auto to allow such calls\n", call.Name, spec.Risk)
		return false, nil
	}
}

package workspace

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentharness/harness"
)

func (w *Workspace) shellSpec() harness.ToolSpec {
	limit := int(w.opts.ShellTimeout / time.Second)
	return harness.ToolSpec{
		Name: "shell",
		Description: fmt.Sprintf("Run a bash command in the workspace root and return its combined stdout and stderr, ending with a line such as [exit status 0]. "+
			"Use it to build, run tests, use git or other command-line tools. "+
			"Arguments: command (a bash script, run with bash -c; stdin is empty, so nothing can prompt); "+
			"timeout_seconds (default and maximum %d). "+
			"Limits: on timeout the command and every process it started are killed and the output so far is returned; "+
			"processes left running in the background are killed when the command ends; a non-zero exit status is reported in the text, not as a failure; "+
			"large output may be cut by the result ceiling. "+
			"Unlike the file tools, a command is not confined to the workspace.",
			limit),
		InputSchema: objectSchema([]string{"command"},
			stringField("command", "Bash command to run, for example \"go test ./...\" or \"git diff --stat\"."),
			intField("timeout_seconds", fmt.Sprintf("Seconds before the command is killed (default and maximum %d).", limit), 1, max(1, limit)),
		),
		Risk: harness.Destructive,
	}
}

type shellArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// The shell's result is a stream (see startShell): ToolResult.Stream
// carries the command's combined output as it is produced, so a guard that
// bounds size reads it with bounded memory; when no guard does, the agent
// drains it into a text part. The exit status is appended to the text as a
// last line ("[exit status 2]") and IsError stays false for a command that
// ran, whatever its status, for two reasons: a non-zero status is often
// information rather than failure (grep without a match, a failing test
// the model is fixing), and the result is handed over before the command
// ends, so setting IsError later would race with whoever reads the
// result. IsError is set only when the command could not be started.
func (w *Workspace) shell(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "shell"
	var a shellArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return failf(tool, "command is required"), nil
	}
	if strings.IndexByte(a.Command, 0) >= 0 {
		return failf(tool, "command contains a NUL byte"), nil
	}
	timeout := w.opts.ShellTimeout
	if a.TimeoutSeconds < 0 {
		return failf(tool, "timeout_seconds must be positive, got %d", a.TimeoutSeconds), nil
	}
	if a.TimeoutSeconds > 0 {
		if d := time.Duration(a.TimeoutSeconds) * time.Second; d < timeout {
			timeout = d
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := startShell(ctx, w.dir, a.Command, w.shellEnv(), timeout)
	if err != nil {
		return failf(tool, "could not start bash: %v", err), nil
	}
	return &harness.ToolResult{
		Stream: s,
		Meta:   map[string]any{"command": a.Command, "timeout_seconds": timeout.Seconds()},
	}, nil
}

// secretWords mark environment variables that are not handed to shell
// commands by default: the model reads whatever a command prints.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

// shellEnv returns the environment of shell commands.
func (w *Workspace) shellEnv() []string {
	if w.opts.ShellEnv != nil {
		return w.opts.ShellEnv
	}
	env := make([]string, 0, 64)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		secret := false
		for _, s := range secretWords {
			if strings.Contains(upper, s) {
				secret = true
				break
			}
		}
		if !secret {
			env = append(env, kv)
		}
	}
	// Nothing may wait for a terminal: no pager, no password prompt.
	return append(env, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "TERM=dumb")
}

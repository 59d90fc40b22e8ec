package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentharness/harness"
)

// Defaults used when an Options field is zero.
const (
	// defaultShellTimeout is below the agent's default tool timeout (120 s)
	// on purpose: the shell's own timeout fires first, so the model gets the
	// output produced so far and a "[killed: timed out]" line instead of a
	// bare timeout error.
	defaultShellTimeout = 90 * time.Second
	// DefaultReadMaxBytes keeps one read_file page under the result
	// ceiling's 24 KiB default, so a page of a spilled result is shown whole.
	DefaultReadMaxBytes = 20000
	// defaultReadLines is the number of lines read_file returns when the
	// call gives no limit (the page byte budget usually stops it first).
	defaultReadLines = 2000
	// defaultMaxLineBytes is where read_file cuts one long line (minified
	// code, a single-line JSON document); the cut is marked.
	defaultMaxLineBytes = 2000
	// defaultMaxOutputBytes bounds what list_dir, glob and grep build in
	// memory before they stop and say so.
	defaultMaxOutputBytes = 256 << 10
	// defaultMaxEditBytes is the largest file edit_file loads.
	defaultMaxEditBytes = 16 << 20
)

// ShellTimeoutUnder is the shell's timeout for an agent whose tool calls
// time out after toolTimeout (0: none): defaultShellTimeout, or 90% of
// toolTimeout when that is not longer, so the shell stops first and the
// model gets the output so far instead of a bare timeout error.
func ShellTimeoutUnder(toolTimeout time.Duration) time.Duration {
	if toolTimeout > 0 && defaultShellTimeout >= toolTimeout {
		return toolTimeout * 9 / 10
	}
	return defaultShellTimeout
}

// Options configure a Workspace. A nil *Options, or a zero field, means the
// default.
type Options struct {
	// Mode decides which tools Tools offers: ModeReadOnly offers only the
	// read-only ones. The zero value is ModeAsk: every tool is offered,
	// and write_file, edit_file and shell run only when the agent's
	// Approver approved the call (see ApproverFor); with no Approver they
	// refuse. Set ModeAuto to run them unasked.
	Mode Mode
	// Shell enables the shell tool. It is off by default because a shell
	// command is not confined to the workspace.
	Shell bool
	// ShellTimeout is both the default and the largest timeout of one shell
	// command (default defaultShellTimeout). Keep it below the agent's
	// ToolTimeout.
	ShellTimeout time.Duration
	// ShellEnv is the environment of shell commands. Nil means the
	// process's environment without variables whose names look like
	// secrets (containing KEY, TOKEN, SECRET, PASSWORD, PASSWD or
	// CREDENTIAL), because the model reads whatever a command prints.
	ShellEnv []string
	// ReadMaxBytes bounds one read_file page, line numbers included
	// (default DefaultReadMaxBytes).
	ReadMaxBytes int
	// MaxLineBytes is where read_file cuts a long line (default
	// defaultMaxLineBytes).
	MaxLineBytes int
	// MaxOutputBytes bounds the text list_dir, glob and grep return
	// (default defaultMaxOutputBytes).
	MaxOutputBytes int
	// MaxEditBytes is the largest file edit_file will edit (default
	// defaultMaxEditBytes).
	MaxEditBytes int
	// AllowHardLinks lets read_file, grep and edit_file read regular
	// files that have more than one hard link (trees built with hard
	// links, such as a pnpm store or cp -al). Off, such files are
	// refused outside the root's own .harness/ folder (errHardLink): a
	// hard link made inside the workspace can name a file outside it, and
	// no path check can see that. write_file is allowed either way: it replaces the name rather
	// than writing through the link, so the other file is never touched.
	AllowHardLinks bool
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.ShellTimeout <= 0 {
		v.ShellTimeout = defaultShellTimeout
	}
	if v.ReadMaxBytes <= 0 {
		v.ReadMaxBytes = DefaultReadMaxBytes
	}
	if v.MaxLineBytes <= 0 {
		v.MaxLineBytes = defaultMaxLineBytes
	}
	// A page must hold at least one cut line with its number and marker.
	v.ReadMaxBytes = max(v.ReadMaxBytes, v.MaxLineBytes+200)
	if v.MaxOutputBytes <= 0 {
		v.MaxOutputBytes = defaultMaxOutputBytes
	}
	if v.MaxEditBytes <= 0 {
		v.MaxEditBytes = defaultMaxEditBytes
	}
	return v
}

// Workspace is a directory the tools are jailed to. It is safe for
// concurrent use; Close releases the directory handle.
type Workspace struct {
	root  *os.Root
	dir   string // absolute, symlinks resolved
	given string // absolute, as given (may contain symlinks)
	opts  Options

	protMu    sync.Mutex
	protected map[fileID]bool // identities of .git and .harness folders seen (unix writes)
	// harness is the identity of the root's own .harness folder, once
	// known (harnessKnown): files with several links are read inside it.
	harness      fileID
	harnessKnown bool
}

// New opens the workspace rooted at dir, which must be an existing
// directory. The root's own path may contain symbolic links; they are
// resolved once, here.
func New(dir string, opts *Options) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace: New needs a directory")
	}
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: root %s is not a directory", dir)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace: opening root %s: %w", dir, err)
	}
	w := &Workspace{root: root, dir: real, given: given, opts: opts.withDefaults()}
	w.seedProtected()
	w.pinHarness()
	return w, nil
}

// Dir returns the workspace root: an absolute path with symbolic links
// resolved.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle. Tools must not be called
// after Close.
func (w *Workspace) Close() error { return w.root.Close() }

// Tools returns the workspace's tools allowed by Options.Mode, in a fixed
// order: read_file, list_dir, glob, grep, then write_file, edit_file and
// (when Options.Shell is set) shell. In ModeAsk the last three refuse any
// call the agent's Approver did not approve. Their specs are byte-for-byte the same
// on every call, so the request prefix stays cacheable.
func (w *Workspace) Tools() []harness.Tool {
	all := []harness.Tool{
		{Spec: w.readSpec(), Func: w.readFile},
		{Spec: w.listSpec(), Func: w.listDir},
		{Spec: w.globSpec(), Func: w.glob},
		{Spec: w.grepSpec(), Func: w.grep},
		{Spec: w.writeSpec(), Func: w.writeFile},
		{Spec: w.editSpec(), Func: w.editFile},
	}
	if w.opts.Shell {
		all = append(all, harness.Tool{Spec: w.shellSpec(), Func: w.shell})
	}
	tools := filterByMode(all, w.opts.Mode)
	if w.opts.Mode == ModeAsk {
		for i, t := range tools {
			if t.Spec.Risk.IsReadOnly() {
				continue
			}
			tools[i].Func = requireApproval(t.Spec.Name, t.Func)
		}
	}
	return tools
}

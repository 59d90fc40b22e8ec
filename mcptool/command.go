package mcptool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// process is one run of a stdio server: the command, a ring buffer with
// the tail of its stderr, and the way to stop it.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	grace  time.Duration

	exited   chan struct{} // closed when Wait returns
	waitErr  error
	stopOnce sync.Once
}

// startProcess starts a stdio server. Its stderr goes to a bounded tail
// buffer (and to extra, when set). The process gets its own process group
// so that stopping it also stops what it spawned (npx → node).
func startProcess(sc *ServerConfig, tail int, grace time.Duration, extra io.Writer) (*process, io.ReadCloser, error) {
	cmd := exec.Command(sc.Command, sc.Args...)
	cmd.Dir = sc.Dir
	cmd.Env = mergeEnv(os.Environ(), sc.Env)
	setProcessGroup(cmd)
	// A grandchild that keeps stderr open must not hold Wait forever.
	cmd.WaitDelay = 2 * time.Second
	p := &process{cmd: cmd, stderr: newTailBuffer(tail), grace: grace, exited: make(chan struct{})}
	if extra != nil {
		cmd.Stderr = io.MultiWriter(p.stderr, extra)
	} else {
		cmd.Stderr = p.stderr
	}
	// An os.Pipe rather than StdoutPipe: Wait closes a StdoutPipe as soon
	// as the process exits, which could drop the last response still
	// buffered in the pipe; this read end is ours and sees EOF instead.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout = w
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		stdout.Close()
		w.Close()
		return nil, nil, err
	}
	err = cmd.Start()
	w.Close() // the child has its copy
	if err != nil {
		stdout.Close()
		return nil, nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, stdout, nil
}

// stop ends the process as the MCP specification asks of a client: close
// its stdin, wait, then SIGTERM, wait, then SIGKILL (to the whole group).
func (p *process) stop() error {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.exited:
			return
		case <-time.After(p.grace):
		}
		signalGroup(p.cmd, false)
		select {
		case <-p.exited:
			return
		case <-time.After(p.grace):
		}
		signalGroup(p.cmd, true)
		<-p.exited
	})
	return nil
}

// exitStatus describes how the process ended, or "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	if p.waitErr == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String() // "exit status 1", "signal: killed"
	}
	return p.waitErr.Error()
}

// waitExit waits up to d for the process to end.
func (p *process) waitExit(d time.Duration) {
	select {
	case <-p.exited:
	case <-time.After(d):
	}
}

// pid returns the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// commandTransport is an mcp.Transport over a started process. It differs
// from mcp.CommandTransport in three ways the harness needs: the frame
// limit is configurable (a tool result of 50 MB is one JSON-RPC line), the
// stderr tail is kept for error messages, and the whole process group is
// stopped.
type commandTransport struct {
	proc     *process
	stdout   io.ReadCloser
	maxFrame int
}

// Connect implements mcp.Transport.
func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return (&mcp.IOTransport{
		Reader:        t.stdout,
		Writer:        stopCloser{t.proc},
		MaxLineLength: t.maxFrame,
	}).Connect(ctx)
}

// stopCloser writes to the process's stdin; Close stops the process.
type stopCloser struct{ p *process }

func (s stopCloser) Write(b []byte) (int, error) { return s.p.stdin.Write(b) }
func (s stopCloser) Close() error                { return s.p.stop() }

// mergeEnv returns base with the entries of extra set (replacing any
// earlier value of the same name), in a deterministic order.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, replaced := extra[k]; !replaced {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	max   int
	total int64
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{max: n} }

// Write implements io.Writer; it never fails.
func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(b))
	if len(b) >= t.max {
		t.buf = append(t.buf[:0], b[len(b)-t.max:]...)
		return len(b), nil
	}
	if over := len(t.buf) + len(b) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// String returns the tail, trimmed, starting at a line boundary when it was
// cut, and saying how much came before.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	cut := t.total - int64(len(t.buf))
	if cut > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			cut += int64(i + 1)
			s = s[i+1:]
		}
	}
	s = strings.TrimSpace(s)
	if cut > 0 {
		s = fmt.Sprintf("(%d earlier bytes not kept)\n%s", cut, s)
	}
	return s
}

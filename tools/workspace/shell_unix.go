//go:build unix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// drainGrace is how long the output is still read once the command's
// process group is dead. Only a process that left the group (setsid) can
// keep the pipe open that long; its output is then abandoned.
const drainGrace = time.Second

// shellStream is a running command: reading it yields the command's
// combined output, then a status line, then io.EOF. Close kills the whole
// process group (if still running) and reaps it.
type shellStream struct {
	out    *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{} // closed when the process is reaped and the output closed
	once   sync.Once
}

// startShell starts bash -c command in dir, in its own process group, with
// stdin from /dev/null and stdout and stderr on one pipe. The process group
// is killed when the command exits (so nothing it left in the background
// outlives the call), when timeout passes, when ctx is done, when the
// stream is closed, and, by a watchdog process in the group, when this
// process dies without doing it.
func startShell(ctx context.Context, dir, command string, env []string, timeout time.Duration) (io.ReadCloser, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bash, "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: the child writes to it directly
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	// The child holds its own copy; ours must go, or the pipe never ends.
	pw.Close()
	dog, err := startWatchdog(bash, cmd.Process.Pid, env)
	if err != nil {
		killGroup(cmd.Process.Pid)
		_ = cmd.Wait()
		pr.Close()
		return nil, fmt.Errorf("starting the watchdog of the command's process group: %w", err)
	}
	outR, outW := io.Pipe()
	rctx, cancel := context.WithCancel(ctx)
	s := &shellStream{out: outR, cancel: cancel, done: make(chan struct{})}
	go s.run(rctx, cmd, dog, pr, outW, timeout)
	return s, nil
}

// watchdogScript waits for its standard input's end, then kills the
// process group named by its first argument (its own included).
const watchdogScript = `read -r _ <&3; kill -KILL -- -"$1"`

// watchdog is the process that kills a command's group if this process
// dies without doing it (kill -9, a crash): it waits on a pipe whose only
// write end is ours, which the kernel closes however we die. A parent-death
// signal would fire only for bash, not for the grandchildren, and on
// Linux only, and when the forking thread, not the process, exits.
type watchdog struct {
	cmd  *exec.Cmd
	hold *os.File // the write end: closing it, or dying, wakes the watchdog
}

// startWatchdog starts the watchdog in process group pgid.
func startWatchdog(bash string, pgid int, env []string) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bash, "-c", watchdogScript, "harness-watchdog", strconv.Itoa(pgid))
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{r} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &watchdog{cmd: cmd, hold: w}, nil
}

// stop ends the watchdog once the group is dead (the group kill reached it
// too) and reaps it.
func (d *watchdog) stop() {
	d.hold.Close()
	_ = d.cmd.Wait()
}

// Read reads the command's output as it is produced.
func (s *shellStream) Read(p []byte) (int, error) { return s.out.Read(p) }

// Close kills the command's process group if it is still running, waits
// until the process is reaped, and releases the pipe. It is safe to call
// more than once and after the output was read to the end.
func (s *shellStream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.out.Close() // a copy blocked on a reader that went away returns
	})
	<-s.done
	return nil
}

// copier moves output from the command's pipe to the stream, remembering
// the last byte so the status line starts on a line of its own.
type copier struct {
	exited atomic.Bool // the process group is dead: reads get a deadline
	n      int64
	last   byte
	held   bool // stopped because a process outside the group kept the pipe open
	err    error
}

func (c *copier) copy(dst *io.PipeWriter, src *os.File) {
	buf := make([]byte, 32<<10)
	for {
		if c.exited.Load() {
			_ = src.SetReadDeadline(time.Now().Add(drainGrace))
		}
		n, rerr := src.Read(buf)
		if n > 0 {
			c.n += int64(n)
			c.last = buf[n-1]
			if _, werr := dst.Write(buf[:n]); werr != nil {
				c.err = werr // the reader closed the stream
				return
			}
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF):
			return
		case errors.Is(rerr, os.ErrDeadlineExceeded):
			c.held = true
			return
		default:
			c.err = rerr
			return
		}
	}
}

func (s *shellStream) run(ctx context.Context, cmd *exec.Cmd, dog *watchdog, pr *os.File, out *io.PipeWriter, timeout time.Duration) {
	defer close(s.done)
	defer pr.Close()
	pgid := cmd.Process.Pid
	c := &copier{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		c.copy(out, pr)
	}()
	exited := make(chan struct{})
	var (
		werr   error
		reaped bool
	)
	go func() {
		defer close(exited)
		if !waitExit(pgid) {
			werr, reaped = cmd.Wait(), true
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	var stopped string
	select {
	case <-exited:
	case <-timer.C:
		stopped = fmt.Sprintf("killed: timed out after %s", timeout)
	case <-ctx.Done():
		stopped = "killed: the call was cancelled"
	}
	// Kill the group in every case: after a normal exit this ends whatever
	// the command left running in the background. Where waitExit can wait
	// without reaping (Linux), bash is still a zombie here, so its process
	// group id cannot have been reused by an unrelated process.
	killGroup(pgid)
	<-exited
	if !reaped {
		werr = cmd.Wait()
	}
	dog.stop()

	c.exited.Store(true)
	_ = pr.SetReadDeadline(time.Now().Add(drainGrace))
	<-copied
	if c.err != nil && errors.Is(c.err, io.ErrClosedPipe) {
		return // the reader closed the stream: nobody wants the status
	}
	_, _ = io.WriteString(out, statusLine(c, werr, stopped))
	out.Close()
}

// statusLine is the last line of the output: how the command ended.
func statusLine(c *copier, werr error, stopped string) string {
	var status string
	var ee *exec.ExitError
	switch {
	case werr == nil:
		status = "exit status 0"
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = "terminated by signal " + ws.Signal().String()
		} else {
			status = fmt.Sprintf("exit status %d", ee.ExitCode())
		}
	default:
		status = "wait failed: " + werr.Error()
	}
	line := "[" + status + "]"
	if stopped != "" {
		line = "[" + stopped + "; " + status + "]"
	}
	if c.held {
		line += "\n[output stopped: a background process that left the command's process group kept the output open]"
	}
	if c.err != nil {
		line += "\n[reading the output failed: " + c.err.Error() + "]"
	}
	switch {
	case c.n == 0:
		return "[no output]\n" + line
	case c.last != '\n':
		return "\n" + line
	}
	return line
}

// killGroup sends SIGKILL to every process of the group. ESRCH (nothing
// left) is the usual answer after a clean exit.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

//go:build unix

package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

func shellWorkspace(t *testing.T, opts *Options) (*Workspace, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Shell = true
	return newTestWorkspace(t, opts, map[string]string{"hello.txt": "hi there\n"})
}

func TestShellOffByDefault(t *testing.T) {
	w, _ := newTestWorkspace(t, nil, nil)
	for _, tl := range w.Tools() {
		if tl.Spec.Name == "shell" {
			t.Fatal("shell offered without Options.Shell")
		}
	}
}

func TestShellRuns(t *testing.T) {
	w, dir := shellWorkspace(t, nil)
	cases := []struct {
		command, want string
	}{
		{"cat hello.txt", "hi there\n[exit status 0]"},
		{"pwd", dir + "\n[exit status 0]"},
		{"printf 'no newline'; exit 3", "no newline\n[exit status 3]"},
		{"echo out; echo err >&2", "out\nerr\n[exit status 0]"},
		{"true", "[no output]\n[exit status 0]"},
		{"cat; echo read-done", "read-done\n[exit status 0]"}, // stdin is empty, nothing waits
		{"kill -SEGV $$", "[no output]\n[terminated by signal segmentation fault]"},
	}
	for _, c := range cases {
		res := run(t, w, "shell", map[string]any{"command": c.command})
		if got := mustOK(t, res); got != c.want {
			t.Errorf("shell %q:\ngot  %q\nwant %q", c.command, got, c.want)
		}
	}
	mustFail(t, run(t, w, "shell", map[string]any{"command": "  "}), "command is required")
}

// TestShellStreams checks that output arrives while the command is still
// running, through the Stream the result carries.
func TestShellStreams(t *testing.T) {
	w, _ := shellWorkspace(t, nil)
	res, err := tool(t, w, "shell").Func(approved(context.Background()), &harness.ToolCall{Name: "shell", Args: json.RawMessage(`{"command":"echo first; sleep 1200; echo never"}`)})
	if err != nil || res.Stream == nil || res.IsError {
		t.Fatalf("res %+v err %v", res, err)
	}
	// The command sleeps 20 minutes after its first line: a first line
	// read before hangBound was streamed.
	start := time.Now()
	line, err := bufio.NewReader(res.Stream).ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if d := time.Since(start); d > hangBound {
		t.Fatalf("first line took %s: output is not streamed", d)
	}
	// Close kills the command and reaps it, long before its sleep ends.
	done := make(chan struct{})
	go func() { res.Stream.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangBound):
		t.Fatal("Close did not return")
	}
	res.Stream.Close() // a second Close is harmless
}

// pidsFrom reads the process ids a command printed, one per line.
func pidsFrom(t *testing.T, text string) []int {
	t.Helper()
	var pids []int
	for _, l := range strings.Split(text, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// alive reports whether pid is a live process; a zombie waiting for a
// reaper (PID 1 in a container may never reap) counts as dead.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// hangBound is the only limit these tests put on work that should finish:
// a loaded machine never reaches it, a hang does. The commands they run
// sleep 20 minutes, so only the behaviour under test ends them.
const hangBound = 10 * time.Minute

func waitDead(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				for _, p := range pids {
					_ = syscall.Kill(p, syscall.SIGKILL) // do not leave them behind
				}
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// The command starts children and grandchildren (a subshell's own
// background job) that would run for 20 minutes (longer than hangBound),
// prints their pids, waits.
const spawnTree = `sleep 1200 & echo $!; (sleep 1200 & echo $!; wait) & echo $!; bash -c 'sleep 1200 & echo $!; wait' & echo $!; wait`

func TestShellTimeoutKillsGrandchildren(t *testing.T) {
	w, _ := shellWorkspace(t, &Options{ShellTimeout: 30 * time.Second})
	start := time.Now()
	res := run(t, w, "shell", map[string]any{"command": spawnTree, "timeout_seconds": 1})
	elapsed := time.Since(start)
	text := mustOK(t, res)
	if !strings.Contains(text, "[killed: timed out after 1s; terminated by signal killed]") {
		t.Fatalf("no timeout line: %q", text)
	}
	if elapsed > hangBound {
		t.Fatalf("took %s for a 1 s timeout", elapsed)
	}
	pids := pidsFrom(t, text)
	if len(pids) < 5 {
		t.Fatalf("want at least 5 pids, got %v from %q", pids, text)
	}
	waitDead(t, pids)
	t.Logf("timeout after %s; %d descendants killed", elapsed.Round(time.Millisecond), len(pids))
}

func TestShellCancelKillsGroup(t *testing.T) {
	w, _ := shellWorkspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := tool(t, w, "shell").Func(approved(ctx), &harness.ToolCall{Name: "shell", Args: mustJSON(t, map[string]any{"command": spawnTree})})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Stream.Close()
	r := bufio.NewReader(res.Stream)
	var pids []int
	for len(pids) < 5 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %v: %v", pids, err)
		}
		pids = append(pids, pidsFrom(t, line)...)
	}
	cancel()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rest), "[killed: the call was cancelled;") {
		t.Fatalf("no cancellation line: %q", rest)
	}
	waitDead(t, pids)
}

func TestShellBackgroundKilledAtExit(t *testing.T) {
	w, _ := shellWorkspace(t, nil)
	start := time.Now()
	// The background job keeps the output pipe open; it must not keep the
	// call waiting until it ends.
	text := mustOK(t, run(t, w, "shell", map[string]any{"command": "sleep 1200 & echo $!"}))
	if time.Since(start) > hangBound {
		t.Fatal("the call waited for a background job")
	}
	if !strings.HasSuffix(text, "\n[exit status 0]") {
		t.Fatalf("got %q", text)
	}
	waitDead(t, pidsFrom(t, text))
}

func TestShellEscapedProcessDoesNotHang(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	w, _ := shellWorkspace(t, nil)
	start := time.Now()
	// setsid leaves the process group; the group kill cannot reach it, so
	// the output is abandoned after a grace period instead of hanging.
	text := mustOK(t, run(t, w, "shell", map[string]any{"command": "echo start; setsid sleep 1200 & echo $!; sleep 0.5"}))
	if d := time.Since(start); d > hangBound {
		t.Fatalf("waited %s for an escaped process", d)
	}
	for _, pid := range pidsFrom(t, text) {
		syscall.Kill(pid, syscall.SIGKILL) // it escaped us; do not leave it behind
	}
	if !strings.Contains(text, "\n[exit status 0]") || !strings.Contains(text, "kept the output open") {
		t.Fatalf("got %q", text)
	}
}

func TestShellEnvironment(t *testing.T) {
	t.Setenv("HARNESS_TEST_API_KEY", "sk-secret")
	t.Setenv("HARNESS_TEST_PLAIN", "visible")
	w, _ := shellWorkspace(t, nil)
	text := mustOK(t, run(t, w, "shell", map[string]any{"command": `echo "[$HARNESS_TEST_API_KEY][$HARNESS_TEST_PLAIN][$GIT_PAGER]"`}))
	if !strings.HasPrefix(text, "[][visible][cat]\n") {
		t.Fatalf("got %q", text)
	}
	w2, _ := shellWorkspace(t, &Options{ShellEnv: []string{"ONLY=this"}})
	text = mustOK(t, run(t, w2, "shell", map[string]any{"command": `echo "$ONLY $HARNESS_TEST_PLAIN"`}))
	if !strings.HasPrefix(text, "this \n") {
		t.Fatalf("explicit env: %q", text)
	}
}

// TestShellUnreadStreamBlocksProducer shows the memory bound: a command
// that prints without end is held back by the pipe when nobody reads, and
// Close stops it.
func TestShellUnreadStreamBlocksProducer(t *testing.T) {
	w, _ := shellWorkspace(t, nil)
	res, err := tool(t, w, "shell").Func(approved(context.Background()), &harness.ToolCall{Name: "shell", Args: mustJSON(t, map[string]any{"command": "yes"})})
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyN(io.Discard, res.Stream, 10<<20)
	if err != nil || n != 10<<20 {
		t.Fatalf("read %d: %v", n, err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	time.Sleep(200 * time.Millisecond)
	var ms2 runtime.MemStats
	runtime.ReadMemStats(&ms2)
	if grew := int64(ms2.HeapAlloc) - int64(ms.HeapAlloc); grew > 4<<20 {
		t.Fatalf("heap grew by %d bytes while the stream was not read", grew)
	}
	if err := res.Stream.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Stream.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, io.EOF) {
		t.Fatalf("read after Close: %v", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

//go:build unix

package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// wedge stops the server's process (SIGSTOP): it stays alive and never
// reads or answers again, as a deadlocked server would. On Linux it waits
// until the kernel reports the process stopped.
func wedge(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A bound that only catches a hang.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return // no /proc: the signal is delivered at once
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop", pid)
		}
	}
}

// TestWedgedServerIsRestarted: a server that is alive but answers nothing
// (not the call, not a ping) is restarted after the call times out, so the
// calls after it do not all time out too.
func TestWedgedServerIsRestarted(t *testing.T) {
	sc := stdioServer(t, "local")
	// The wedged call must time out; the calls after it answer in
	// milliseconds, so this bound only catches a hang.
	sc.Timeout = 3 * time.Second
	set, tools := openTest(t, &Options{RestartBackoff: -1}, sc)
	srv := set.serverNamed("local")
	pid := srv.PID()
	wedge(t, pid)
	res := call(t, tools, "echo", `{"text":"lost"}`)
	if !res.IsError || !res.TimedOut || !strings.Contains(res.FullText(), "restarted") {
		t.Fatalf("wedged call: %+v", res.FullText())
	}
	for i := range 2 {
		if res := call(t, tools, "echo", `{"text":"back"}`); res.IsError || res.FullText() != "back" {
			t.Fatalf("call %d after the wedge: %s", i+1, res.FullText())
		}
	}
	if n := srv.Restarts(); n != 1 {
		t.Errorf("restarts %d, want 1", n)
	}
	if srv.PID() == pid {
		t.Error("the wedged process still serves")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the wedged process %d was left running", pid)
	}
}

// TestWedgedServerRestartBacksOff: restarts after timeouts are spaced by
// Options.RestartBackoff (doubling while the server keeps wedging), and a
// call in the meantime says when the next restart comes, at once.
func TestWedgedServerRestartBacksOff(t *testing.T) {
	sc := stdioServer(t, "local")
	sc.Timeout = 3 * time.Second
	set, tools := openTest(t, &Options{RestartBackoff: time.Hour}, sc)
	wedge(t, set.serverNamed("local").PID())
	if res := call(t, tools, "echo", `{"text":"lost"}`); !res.TimedOut {
		t.Fatalf("wedged call: %s", res.FullText())
	}
	res := call(t, tools, "echo", `{"text":"back"}`)
	if !res.IsError || !strings.Contains(res.FullText(), "next restart in") {
		t.Fatalf("during the back-off: %s", res.FullText())
	}
	if n := set.serverNamed("local").Restarts(); n != 0 {
		t.Errorf("restarts %d during the back-off", n)
	}
}

// TestWedgedServerIsRestartedWhenTheCallerGivesUpFirst: when the caller's
// deadline (the agent's tool timeout) ends before the server's own call
// timeout, the server is still pinged, on a context of its own, and a
// wedged one restarted: the next call is served by a new process. Nothing
// here depends on speed: the caller's context is cancelled once the call
// is under way (or, wedged, at any point), and the server's timeout is far
// out of reach.
func TestWedgedServerIsRestartedWhenTheCallerGivesUpFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wedged bool
	}{{"wedged", true}, {"slow but alive", false}} {
		t.Run(tc.name, func(t *testing.T) {
			sc := stdioServer(t, "local")
			sc.Timeout = time.Hour
			set, tools := openTest(t, &Options{RestartBackoff: -1}, sc)
			srv := set.serverNamed("local")
			pid := srv.PID()
			mark := filepath.Join(t.TempDir(), "running")
			args := sleepArgs(3_600_000, mark)
			if tc.wedged {
				wedge(t, pid)
				args = `{"text":"lost"}`
			}
			tool := "echo"
			if !tc.wedged {
				tool = "sleep"
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := tools[tool].Func(ctx, &harness.ToolCall{ID: "c1", Name: tool, Args: json.RawMessage(args)})
				done <- err
			}()
			if !tc.wedged {
				awaitFile(t, mark) // the slow call is under way
			}
			// A wedged server cannot tell; sent yet or not, the verdict
			// below is the same.
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("the abandoned call: %v, want context.Canceled", err)
			}
			// A bound that only catches the old behaviour: a call sent to
			// the wedged process, which would wait for the server's hour.
			after, stop := context.WithTimeout(context.Background(), time.Minute)
			defer stop()
			res, err := tools["echo"].Func(after, &harness.ToolCall{ID: "c2", Name: "echo", Args: json.RawMessage(`{"text":"back"}`)})
			if err != nil || res.IsError || res.FullText() != "back" {
				t.Fatalf("the call after: %v %+v", err, res)
			}
			restarts := 0
			if tc.wedged {
				restarts = 1
			}
			if n := srv.Restarts(); n != restarts {
				t.Errorf("restarts %d, want %d", n, restarts)
			}
			if moved := srv.PID() != pid; moved != tc.wedged {
				t.Errorf("pid %d → %d", pid, srv.PID())
			}
		})
	}
}

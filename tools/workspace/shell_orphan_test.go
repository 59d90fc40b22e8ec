//go:build unix

package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// longTree is spawnTree with sleeps far longer than the test's bound, so
// that a process that survives is caught, not outlived.
var longTree = strings.ReplaceAll(spawnTree, "sleep 60", "sleep 900")

// TestShellChildrenDieWithHarness: a process running a shell call is
// killed with SIGKILL (no cleanup runs in it); the command's whole process
// group, grandchildren included, must die too instead of running on with
// ppid 1.
func TestShellChildrenDieWithHarness(t *testing.T) {
	if dir := os.Getenv("HARNESS_SHELL_ORPHAN_CHILD"); dir != "" {
		orphanChild(dir)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShellChildrenDieWithHarness$")
	cmd.Env = append(os.Environ(), "HARNESS_SHELL_ORPHAN_CHILD="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var pids []int
	if rest, ok := strings.CutPrefix(line, "pids "); ok {
		pids = pidsFrom(t, strings.ReplaceAll(rest, " ", "\n"))
	}
	if err != nil || len(pids) < 5 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q (%v)", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// A bound that only catches a hang: the sleeps run for 15 minutes.
	deadline := time.Now().Add(2 * time.Minute)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				for _, p := range pids {
					if alive(p) {
						_ = syscall.Kill(p, syscall.SIGKILL)
					}
				}
				t.Fatalf("process %d of the shell call outlived the killed harness (pids %v)", pid, pids)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// orphanChild runs a shell call that starts a process tree, prints the
// tree's pids and waits to be killed.
func orphanChild(dir string) {
	w, err := New(dir, &Options{Mode: ModeAuto, Shell: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	args, _ := json.Marshal(map[string]string{"command": longTree})
	res, err := w.shell(context.Background(), &harness.ToolCall{Name: "shell", Args: args})
	if err != nil || res.Stream == nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	r := bufio.NewReader(res.Stream)
	var pids []string
	for len(pids) < 5 {
		l, err := r.ReadString('\n')
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		pids = append(pids, strings.TrimSpace(l))
	}
	fmt.Println("pids " + strings.Join(pids, " "))
	select {}
}

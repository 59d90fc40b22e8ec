package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/temporaltest"

	"github.com/agentharness/harness"
	htemporal "github.com/agentharness/harness/temporal"
)

// TestWorkerPinsToolSteps runs "harness-temporal worker" and "harness-temporal
// run" against the in-process server, with a script whose turn greps
// once: the worker runs session workers, so the turn's tool step is
// scheduled on the worker's own session task queue, not on the shared
// queue (where it would go after the pin timeout, on a worker without
// them); a turn run with --unpinned schedules it on the shared queue.
func TestWorkerPinsToolSteps(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	root, _, _ := workerFixture(t)
	dir := filepath.Dir(root)
	script := filepath.Join(dir, "grep.json")
	turn := `{"tool_calls":[{"name":"grep","args":{"pattern":"needle","path":"big.txt"}}]},{"text":"found them"}`
	steps := `{"steps":[` + turn + `,` + turn + `]}` // a pinned turn, then one run with --unpinned
	if err := os.WriteFile(script, []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster := []string{"--temporal", ts.GetFrontendHostPort(), "--namespace", ts.GetDefaultNamespace(), "--task-queue", "q-cli"}
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() {
		args := append(append([]string{"worker"}, cluster...),
			"--db", filepath.Join(dir, "harness.db"), "--model", "scripted:"+script, "--workspace", root)
		stopped <- run(ctx, args, io.Discard, io.Discard)
	}()
	defer func() {
		stop()
		if err := <-stopped; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	// Only a hang fails here: no figure is measured.
	runCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// turnQueues runs one turn of conv with extra flags and returns the
	// task queues its tool steps were scheduled on.
	turnQueues := func(conv string, extra ...string) []string {
		var stdout bytes.Buffer
		args := append(append(append([]string{"run"}, cluster...), "--conversation", conv, "--json"), extra...)
		if err := run(runCtx, append(args, "find the needles"), &stdout, io.Discard); err != nil {
			t.Fatal(err)
		}
		var out htemporal.TurnOutput
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if out.Outcome != harness.Answered || out.ToolCalls != 1 || out.Answer != "found them" {
			t.Fatalf("turn of %s = %+v, want answered after one tool call", conv, out)
		}
		var queues []string
		it := ts.GetDefaultClient().GetWorkflowHistory(runCtx, htemporal.WorkflowID(conv), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.ActivityType.GetName() == htemporal.ActivityTool {
				queues = append(queues, a.TaskQueue.GetName())
			}
		}
		return queues
	}
	if q := turnQueues("c-cli"); len(q) != 1 || q[0] == "q-cli" {
		t.Errorf("pinned turn: tool steps scheduled on %q, want one, in a session (not the shared queue q-cli)", q)
	}
	if q := turnQueues("c-cli-unpinned", "--unpinned"); len(q) != 1 || q[0] != "q-cli" {
		t.Errorf("--unpinned turn: tool steps scheduled on %q, want one, on the shared queue q-cli", q)
	}
}

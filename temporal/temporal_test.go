package temporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentharness/harness"
	htemporal "github.com/agentharness/harness/temporal"
)

var update = flag.Bool("update", false, "rewrite testdata/turn-pinned.history.json from a live run")

// recordedHistory is a turn's workflow history recorded from a live run
// (tool steps pinned to one worker); TestReplayRecorded replays it with
// no server.
const recordedHistory = "testdata/turn-pinned.history.json"

// unpinnedHistory was recorded before tool steps were pinned (never
// rewritten): a turn begun by such a worker must still replay.
const unpinnedHistory = "testdata/turn.history.json"

// maxEventBytes bounds every event of a turn's history. The turn's big
// tool returns bigBytes (1 MiB): a history event that held it would be
// 64 times this bound.
const maxEventBytes = 16 << 10

// testInput runs every turn in the tests: heartbeats every half second
// and a two-second heartbeat timeout, so a killed worker's step is retried
// in seconds (no test measures how many).
func testInput(conv, input string) htemporal.TurnInput {
	return htemporal.TurnInput{Conversation: conv, Input: input, Heartbeat: 2e9}
}

// TestServer needs the real Temporal server, started in-process by
// temporaltest (no network, no external service). It never skips.
func TestServer(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ref := t.TempDir()
	var want string
	t.Run("turn", func(t *testing.T) {
		want = uninterrupted(t, ts, c, ref)
	})
	for _, tc := range []struct {
		name, block string
		postgres    bool // store and journal in PostgreSQL
	}{
		{"killed after tool calls", "stored:3", false},
		{"killed during model call", "model:3", false},
		{"killed after tool calls, postgres", "stored:3", true},
		{"killed during model call, postgres", "model:3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if want == "" {
				t.Fatal("the uninterrupted run failed")
			}
			dir := t.TempDir()
			queue := "q-" + strings.ReplaceAll(tc.block, ":", "-")
			if tc.postgres {
				usePostgres(t, dir)
				queue += "-pg"
			}
			first := startChild(t, ts, dir, queue, tc.block)
			run := startTurn(t, c, queue)
			first.waitFor(t, "BLOCKED "+tc.block, run.ended)
			first.kill(t)
			before := counts(t, dir)
			startChild(t, ts, dir, queue, "")
			after := run.finish(t, dir, want)
			for id, n := range before {
				if after[id] != n {
					t.Errorf("call %s ran %d time(s) before the kill and %d in all", id, n, after[id])
				}
			}
		})
	}
	t.Run("postgres restarted mid-turn", func(t *testing.T) {
		if want == "" {
			t.Fatal("the uninterrupted run failed")
		}
		testRestartMidTurn(t, ts, c, want)
	})
}

// testRestartMidTurn restarts the PostgreSQL server (fast shutdown: every
// connection breaks, the turn's session lock with them) while a live
// worker is in the middle of a turn, just after the third tool result is
// journalled; the worker then goes on. Its next store write finds the
// turn's connection broken, fails, and is retried: ResumeTurn takes the
// lock again on a new connection, and the turn ends as the uninterrupted
// run's, each call run once, nothing half-written.
func testRestartMidTurn(t *testing.T, ts *temporaltest.TestServer, c client.Client, want string) {
	dir := t.TempDir()
	usePostgres(t, dir)
	queue := "q-restart-pg"
	w := startChild(t, ts, dir, queue, "stored:3:pause")
	run := startTurn(t, c, queue)
	w.waitFor(t, "BLOCKED stored:3", run.ended)
	if err := pgServer.Restart(); err != nil {
		t.Fatal(err)
	}
	w.resume(t)
	run.finish(t, dir, want)
}

// turnRun is the test's turn, started on the cluster; its result arrives
// on ended.
type turnRun struct {
	out   htemporal.TurnOutput
	ended chan error
}

// startTurn starts the test's turn of conv-1 on queue.
func startTurn(t *testing.T, c client.Client, queue string) *turnRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	t.Cleanup(cancel)
	run, err := htemporal.StartTurn(ctx, c, queue, testInput("conv-1", "count for me"))
	if err != nil {
		t.Fatal(err)
	}
	r := &turnRun{ended: make(chan error, 1)}
	go func() { r.ended <- run.Get(ctx, &r.out) }()
	return r
}

// finish waits for the turn to end and checks it: answered after 4
// rounds and 5 calls, every call of the transcript run once, the stored
// transcript the uninterrupted run's (want). It returns the counts.
func (r *turnRun) finish(t *testing.T, dir, want string) map[string]int {
	t.Helper()
	if err := <-r.ended; err != nil {
		t.Fatal(err)
	}
	if out := r.out; out.Outcome != harness.Answered || out.Rounds != 4 || out.ToolCalls != 5 {
		t.Fatalf("turn = %+v, want answered after 4 rounds and 5 calls", out)
	}
	ran := counts(t, dir)
	checkOnce(t, dir, ran)
	if got := dump(t, dir); got != want {
		t.Errorf("the transcript differs from the uninterrupted run's: %s", firstDiff(got, want))
	}
	return ran
}

// uninterrupted runs one turn on an in-process worker, checks it and its
// history, and returns the canonical dump of its transcript.
func uninterrupted(t *testing.T, ts *temporaltest.TestServer, c client.Client, dir string) string {
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	r, err := newRig(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	w := ts.NewWorkerWithOptions("q-ref", r.acts.Register, htemporal.WorkerOptions(worker.Options{}))
	defer w.Stop()
	run, err := htemporal.StartTurn(ctx, c, "q-ref", testInput("conv-1", "count for me"))
	if err != nil {
		t.Fatal(err)
	}
	var out htemporal.TurnOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Outcome != harness.Answered || out.Rounds != 4 || out.ToolCalls != 5 || out.Turn != 1 || !strings.HasPrefix(out.Answer, "done after") {
		t.Fatalf("turn = %+v, want answered after 4 rounds and 5 calls", out)
	}
	checkOnce(t, dir, counts(t, dir))
	hist := history(t, c, run)
	checkSmall(t, hist)
	replay(t, hist)
	if *update {
		b, err := protojson.MarshalOptions{Indent: " "}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(recordedHistory, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dump(t, dir)
}

// checkOnce fails unless every call of the stored transcript ran exactly
// once and nothing else ran.
func checkOnce(t *testing.T, dir string, ran map[string]int) {
	t.Helper()
	calls := 0
	for _, turn := range load(t, dir).Turns {
		for _, r := range turn.Rounds {
			for _, c := range r.Assistant.ToolCalls {
				calls++
				if n := ran["conv-1/"+c.ID]; n != 1 {
					t.Errorf("call %s ran %d times, want once", c.ID, n)
				}
			}
		}
	}
	if calls != len(ran) {
		t.Errorf("%d distinct calls ran, the transcript holds %d: %v", len(ran), calls, ran)
	}
}

func load(t *testing.T, dir string) *harness.Conversation {
	t.Helper()
	r, err := newRig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	conv, err := r.store.LoadFull(context.Background(), "conv-1")
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// dump is the canonical form of the stored conversation: every turn,
// round, full result and model copy and the request records, without the
// wall-clock times.
func dump(t *testing.T, dir string) string {
	t.Helper()
	conv := load(t, dir)
	for _, turn := range conv.Turns {
		turn.Started, turn.Ended = time.Time{}, time.Time{}
		for _, r := range turn.Rounds {
			r.Answered = time.Time{}
		}
	}
	r, err := newRig(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	reqs, err := r.store.Requests(context.Background(), "conv-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"conversation": conv, "requests": reqs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstDiff shows where got and want part, with some context (a dump
// holds a megabyte result: printing both whole would bury the difference).
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-120)
	clip := func(s string) string { return s[min(from, len(s)):min(i+120, len(s))] }
	return fmt.Sprintf("at byte %d of %d (want %d):\n got …%s…\nwant …%s…", i, len(got), len(want), clip(got), clip(want))
}

// history fetches the whole history of a finished run.
func history(t *testing.T, c client.Client, run client.WorkflowRun) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// checkSmall fails when any history event is near the size of a result.
func checkSmall(t *testing.T, h *historypb.History) {
	t.Helper()
	largest := 0
	for _, ev := range h.Events {
		n := proto.Size(ev)
		largest = max(largest, n)
		if n > maxEventBytes {
			t.Errorf("history event %d (%s) has %d bytes, more than %d", ev.EventId, ev.EventType, n, maxEventBytes)
		}
	}
	t.Logf("%d history events, the largest %d bytes (the big result has %d)", len(h.Events), largest, bigBytes)
}

// replay replays h against the workflow code: it fails if the code would
// now make different decisions.
func replay(t *testing.T, h *historypb.History) {
	t.Helper()
	rp := worker.NewWorkflowReplayer()
	(&htemporal.Activities{}).RegisterWorkflow(rp)
	if err := rp.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TestReplayRecorded replays turns' histories recorded from live runs,
// one before tool steps were pinned and one since (go test -run
// TestServer/turn -update rewrites the latter): the workflow code must
// still make the same decisions. It needs no server.
func TestReplayRecorded(t *testing.T) {
	for _, file := range []string{unpinnedHistory, recordedHistory} {
		rp := worker.NewWorkflowReplayer()
		(&htemporal.Activities{}).RegisterWorkflow(rp)
		if err := rp.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
			t.Errorf("replay %s: %v", file, err)
		}
	}
}

// child is a worker process.
type child struct {
	cmd   *exec.Cmd
	lines chan string
	stdin io.WriteCloser
}

// resume releases the child's paused blocker.
func (c *child) resume(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// startChild starts this test binary as a worker process on queue with
// its rig in dir, and waits until it polls.
func startChild(t *testing.T, ts *temporaltest.TestServer, dir, queue, block string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+dir, envHostPort+"="+ts.GetFrontendHostPort(),
		envNamespace+"="+ts.GetDefaultNamespace(), envQueue+"="+queue, envBlock+"="+block)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, lines: make(chan string, 16), stdin: stdin}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ch.lines <- sc.Text()
		}
		close(ch.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ch.waitFor(t, "READY", nil)
	return ch
}

// waitFor waits for the child to print line. It fails when the child
// exits first, or when the turn ends first (ended, when not nil, gets the
// turn's result): a step that fails for good ends the workflow, and the
// child then never reaches the point it was to stop at. Anything else
// that hangs fails the test by its -timeout.
func (c *child) waitFor(t *testing.T, line string, ended <-chan error) {
	t.Helper()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the worker exited before printing %q", line)
			}
			if l == line {
				return
			}
		case err := <-ended:
			t.Fatalf("the turn ended (%v) before the worker printed %q", err, line)
		}
	}
}

// kill SIGKILLs the worker process and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

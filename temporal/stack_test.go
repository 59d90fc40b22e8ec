package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store"
	htemporal "github.com/agentharness/harness/temporal"
	"github.com/agentharness/harness/tools/recall"
)

// stackConv is the conversation of the default-stack tests, the same id
// in both runs, so spill paths and markers match.
const stackConv = "conv-s"

// linesTool returns the same 40 lines on every call: a re-read the
// default stack's Collapse shows once.
func linesTool() harness.Tool {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "line %02d of a file the agent reads twice in one round\n", i+1)
	}
	text := b.String()
	return harness.Tool{
		Spec: harness.ToolSpec{Name: "lines", Description: "Returns forty lines.", Risk: harness.ReadOnly},
		Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(text), nil
		},
	}
}

// rereadModel answers from the request alone: its first round reads the
// same lines twice and calls big (1 MiB), its second answers.
func rereadModel(_ context.Context, req *harness.Request) (*harness.Response, error) {
	msg := harness.Message{Role: harness.RoleAssistant}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == harness.RoleUser && !req.Final {
		msg.Parts = []harness.Part{harness.TextPart("reading the lines, twice, and the big output")}
		msg.ToolCalls = []harness.ToolCall{
			{ID: "c1", Name: "lines", Args: json.RawMessage(`{}`)},
			{ID: "c2", Name: "lines", Args: json.RawMessage(`{}`)},
			{ID: "c3", Name: "big", Args: json.RawMessage(`{}`)},
		}
	} else {
		msg.Parts = []harness.Part{harness.TextPart(fmt.Sprintf("done after %d messages", len(req.Messages)))}
	}
	return &harness.Response{Message: msg, Usage: harness.Usage{Input: 10 * len(req.Messages), Output: 5}}, nil
}

// stackOptions are the options of both runs: the lines and big tools, the
// workspace ws, recording into st, with the default stack applied as
// harness run and the worker apply it (recall reading st).
func stackOptions(ws string, st store.Store) *harness.Options {
	opts := &harness.Options{System: "You read.", Tools: []harness.Tool{linesTool(), bigTool(filepath.Join(ws, "..", "counter"))},
		MaxRounds: 4, Workspace: ws, Recorder: st}
	stack.New(&stack.Config{Recall: &recall.Options{Lookup: st.FullResult}}).Apply(opts)
	return opts
}

// openStackStore opens the SQLite store of a run in dir, with its
// workspace dir/ws.
func openStackStore(t *testing.T, dir string) (ws string, st store.Store) {
	t.Helper()
	ws = filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := htemporal.OpenStore(context.Background(), filepath.Join(dir, "harness.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return ws, st
}

// inProcess runs the turn with harness.Agent (Engine.RunCalls) in dir and
// returns its stored conversation.
func inProcess(t *testing.T, dir string) *harness.Conversation {
	t.Helper()
	ctx := context.Background()
	ws, st := openStackStore(t, dir)
	agent, err := harness.New(harness.ModelFunc(rereadModel), stackOptions(ws, st))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Run(ctx, harness.NewConversation(stackConv), "read it"); err != nil {
		t.Fatal(err)
	}
	conv, err := st.LoadFull(ctx, stackConv)
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// durable runs the turn on a worker of ts whose engine has the default
// stack, checks its history is small, and returns the stored conversation.
func durable(t *testing.T, ts *temporaltest.TestServer, dir string) *harness.Conversation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	ws, st := openStackStore(t, dir)
	j, err := htemporal.OpenJournal(ctx, filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	eng, err := harness.NewEngine(stackOptions(ws, st))
	if err != nil {
		t.Fatal(err)
	}
	acts := &htemporal.Activities{Engine: eng, Store: st, Model: harness.ModelFunc(rereadModel), Journal: j}
	w := ts.NewWorkerWithOptions("q-stack", acts.Register, htemporal.WorkerOptions(worker.Options{}))
	defer w.Stop()
	c := ts.GetDefaultClient()
	run, err := htemporal.StartTurn(ctx, c, "q-stack", testInput(stackConv, "read it"))
	if err != nil {
		t.Fatal(err)
	}
	var out htemporal.TurnOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Outcome != harness.Answered || out.Rounds != 2 || out.ToolCalls != 3 {
		t.Fatalf("turn = %+v, want answered after 2 rounds and 3 calls", out)
	}
	checkSmall(t, history(t, c, run))
	conv, err := st.LoadFull(ctx, stackConv)
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// results returns the results of the conversation's first round by call
// id.
func results(t *testing.T, conv *harness.Conversation) map[string]*harness.ToolResult {
	t.Helper()
	if len(conv.Turns) != 1 || len(conv.Turns[0].Rounds) != 2 {
		t.Fatalf("stored %d turn(s), want one of 2 rounds", len(conv.Turns))
	}
	out := map[string]*harness.ToolResult{}
	for _, r := range conv.Turns[0].Rounds[0].Results {
		out[r.CallID] = r
	}
	return out
}

// modelCopy is what the model was shown of res, with the cuts that say
// why, as one comparable string.
func modelCopy(t *testing.T, res *harness.ToolResult) string {
	t.Helper()
	cuts, err := json.Marshal(res.Cuts)
	if err != nil {
		t.Fatal(err)
	}
	return res.ModelText() + "\ncuts " + string(cuts)
}

// TestDefaultStack runs a turn on a worker whose engine has the default
// stack, as harness-temporal worker builds it, against the real server:
// the 1 MiB result is stored whole and shown as the ceiling's preview,
// its spill file is in the workspace, nothing large travels in the
// history; and the second of two identical reads of one round is shown as
// the in-process engine shows it (Collapse sees the first through the
// journal), so the model copies of both stored transcripts are equal.
func TestDefaultStack(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	want := results(t, inProcess(t, t.TempDir()))
	dir := t.TempDir()
	got := results(t, durable(t, ts, dir))

	big := got["c3"]
	full := bigBytes / 100 * 100 // bigTool's 100-byte lines
	if big == nil || big.PayloadSize() != full || big.Bytes != full {
		t.Fatalf("the big result is not stored whole: %s", sizes(big))
	}
	if n := len(big.ModelText()); n > guard.DefaultMaxBytes || len(big.Cuts) == 0 || big.Cuts[0].By != guard.ResultPolicyName {
		t.Errorf("the big result's model copy has %d bytes, cuts %+v: want the ceiling's preview", n, big.Cuts)
	}
	spilled := filepath.Join(dir, "ws", filepath.FromSlash(big.Cuts[0].Locator))
	if fi, err := os.Stat(spilled); err != nil || fi.Size() != int64(full) {
		t.Errorf("spill file %s: %v (want %d bytes)", spilled, err, full)
	}
	if !strings.Contains(want["c2"].ModelText(), "[collapsed:") {
		t.Fatalf("in process, the second read is not collapsed: %s", modelCopy(t, want["c2"]))
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if got[id] == nil || want[id] == nil {
			t.Fatalf("call %s: durable %s, in process %s", id, sizes(got[id]), sizes(want[id]))
		}
		if g, w := modelCopy(t, got[id]), modelCopy(t, want[id]); g != w {
			t.Errorf("call %s: the durable turn showed the model\n%s\nthe in-process engine\n%s", id, g, w)
		}
	}
}

// sizes describes res without its payload.
func sizes(res *harness.ToolResult) string {
	if res == nil {
		return "no result"
	}
	return fmt.Sprintf("%d bytes (payload %d, model copy %d), cuts %+v", res.Bytes, res.PayloadSize(), len(res.ModelText()), res.Cuts)
}

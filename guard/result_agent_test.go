package guard_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tools/workspace"
)

// TestResultPolicySpillPagingInAgent runs the whole loop with the real
// workspace tools: a shell command streams 20,000 lines, the guard spills
// them and shows a preview with the path, and the model pages the spill
// file with read_file and searches it with grep — both shown whole, never
// spilled again.
func TestResultPolicySpillPagingInAgent(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no shell")
	}
	dir := t.TempDir()
	ws, err := workspace.New(dir, &workspace.Options{Mode: workspace.ModeAuto, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	const spillPath = ".harness/spill/c_it/call_sh-shell.txt"
	script, err := scripted.Parse([]byte(`{"steps": [
		{"tool_calls": [{"id": "call_sh", "name": "shell", "args": {"command": "seq 1 20000"}}]},
		{"expect": {"last_tool_contains": ["` + spillPath + `", "read_file", "grep", "(20001 lines)", "20000\n[exit status 0]"]},
		 "tool_calls": [{"id": "call_rd", "name": "read_file", "args": {"path": "` + spillPath + `", "offset": 12000, "limit": 3}}]},
		{"expect": {"last_tool_contains": ["12000", "12001", "12002"]},
		 "tool_calls": [{"id": "call_gr", "name": "grep", "args": {"pattern": "^15000$", "path": "` + spillPath + `"}}]},
		{"expect": {"last_tool_contains": ["15000"]}, "text": "Line 15000 is there."}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	var events []harness.Event
	agent, err := harness.New(scripted.New(script, nil), &harness.Options{
		Tools:     ws.Tools(),
		Guards:    []harness.Guard{(&guard.ResultPolicy{}).Guard()},
		Workspace: ws.Dir(),
		Observer:  func(e harness.Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_it")
	res, err := agent.Run(context.Background(), conv, "Is 15000 in the output of seq?")
	if err != nil || res.Outcome != harness.Answered {
		t.Fatalf("outcome %s, err %v", res.Outcome, err)
	}
	sh := conv.FindResult("call_sh")
	if len(sh.Cuts) != 1 || sh.Cuts[0].Kind != harness.CutSpilled || sh.Cuts[0].Locator != spillPath {
		t.Fatalf("shell cuts %+v", sh.Cuts)
	}
	if n := len(sh.ModelText()); n > guard.DefaultMaxBytes {
		t.Fatalf("shell copy %d bytes", n)
	}
	data, err := os.ReadFile(filepath.Join(dir, spillPath))
	if err != nil || !strings.HasPrefix(string(data), "1\n2\n3\n") || !strings.Contains(string(data), "19999\n20000\n") {
		t.Fatalf("spill file: %d bytes, %v", len(data), err)
	}
	for _, id := range []string{"call_rd", "call_gr"} {
		if r := conv.FindResult(id); len(r.Cuts) > 0 || r.IsError {
			t.Fatalf("%s: %+v cuts %+v", id, r.FullText(), r.Cuts)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".harness/spill/c_it"))
	if len(entries) != 1 {
		t.Fatalf("spill folder holds %d files, want only the shell's", len(entries))
	}
	policy := 0
	for _, e := range events {
		if e.Kind == harness.EventPolicy && e.Policy == guard.ResultPolicyName {
			policy++
			if e.Data["spill_path"] != spillPath {
				t.Fatalf("event %+v", e.Data)
			}
		}
	}
	if policy != 1 {
		t.Fatalf("%d policy events, want 1", policy)
	}
}

// TestResultPolicyDedupeInAgent: with Dedupe From 2, re-reading an
// unchanged file gets a pointer to the earlier call; after a write, the
// re-read is shown in full.
func TestResultPolicyDedupeInAgent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nconst Answer = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir, &workspace.Options{Mode: workspace.ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	script, err := scripted.Parse([]byte(`{"steps": [
		{"tool_calls": [{"id": "call_r1", "name": "read_file", "args": {"path": "a.go"}}]},
		{"expect": {"last_tool_contains": ["Answer = 42"]},
		 "tool_calls": [{"id": "call_r2", "name": "read_file", "args": {"path": "a.go"}}]},
		{"expect": {"last_tool_contains": ["repeats call call_r1", "nothing has been modified since"]},
		 "tool_calls": [{"id": "call_w", "name": "edit_file", "args": {"path": "a.go", "old_string": "42", "new_string": "43"}}]},
		{"tool_calls": [{"id": "call_r3", "name": "read_file", "args": {"path": "a.go"}}]},
		{"expect": {"last_tool_contains": ["Answer = 43"]}, "text": "43"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := harness.New(scripted.New(script, nil), &harness.Options{
		Tools:     ws.Tools(),
		Guards:    []harness.Guard{(&guard.ResultPolicy{Dedupe: guard.Dedupe{From: 2}}).Guard()},
		Workspace: ws.Dir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("c_dd")
	if res, err := agent.Run(context.Background(), conv, "What is the answer?"); err != nil || res.Outcome != harness.Answered {
		t.Fatalf("outcome %s, err %v", res.Outcome, err)
	}
	if r := conv.FindResult("call_r2"); len(r.Cuts) != 1 || r.Cuts[0].Of != "call_r1" || !strings.Contains(r.FullText(), "Answer = 42") {
		t.Fatalf("call_r2: cuts %+v", r.Cuts)
	}
	if r := conv.FindResult("call_r3"); len(r.Cuts) > 0 {
		t.Fatalf("call_r3 after a write: cuts %+v", r.Cuts)
	}
}

// TestGuardsOfATimedOutCallReadASnapshot: a tool that ignores its context
// outlives its timeout, and its guards (the default ResultPolicy, whose
// relevant preview reads the transcript, and Collapse) run after the loop
// has moved on and is appending rounds. Under -race this fails if guards
// read the live transcript.
func TestGuardsOfATimedOutCallReadASnapshot(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	slow := harness.Tool{
		Spec: harness.ToolSpec{Name: "slow", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			defer close(done)
			<-release // ignores ctx: returns after the loop has gone on
			return harness.TextResult(strings.Repeat("line of a slow tool's output\n", 2500)), nil
		},
	}
	fast := harness.Tool{
		Spec: harness.ToolSpec{Name: "fast", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), nil
		},
	}
	steps := []scripted.Step{{ToolCalls: []scripted.Call{{Name: "slow", Args: []byte(`{}`)}}}}
	for range 30 {
		steps = append(steps, scripted.Step{ToolCalls: []scripted.Call{{Name: "fast", Args: []byte(`{}`)}}})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	requests := 0
	obs := func(e harness.Event) {
		if e.Kind == harness.EventRequest {
			if requests++; requests == 3 {
				close(release) // the slow call's guards now run while rounds are appended
			}
		}
	}
	agent, err := harness.New(scripted.New(&scripted.Script{Steps: steps}, nil), &harness.Options{
		Tools: []harness.Tool{slow, fast}, MaxRounds: 40, ToolTimeout: 20 * time.Millisecond, Observer: obs,
		Guards: []harness.Guard{(&guard.ResultPolicy{}).Guard(), (&guard.Collapse{}).Guard()},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil || res.Outcome != harness.Answered {
		t.Fatalf("%v %s", err, res.Outcome)
	}
	<-done
	if r := res.Turn.Rounds[0].Results[0]; !r.IsError || !r.TimedOut {
		t.Fatalf("the slow call's result: %+v", r)
	}
}

//go:build unix

package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// TestAgentWithWorkspaceTools runs the tools inside a real harness.Agent:
// the agent validates the arguments against the schemas, asks the terminal
// approver before the destructive calls, and drains the shell's stream.
func TestAgentWithWorkspaceTools(t *testing.T) {
	w, dir := newTestWorkspace(t, &Options{Shell: true}, map[string]string{"notes.txt": "alpha\nbeta\n"})
	calls := []harness.ToolCall{
		{ID: "1", Name: "read_file", Args: json.RawMessage(`{"path":"notes.txt"}`)},
		{ID: "2", Name: "write_file", Args: json.RawMessage(`{"path":"out.txt","content":"refused\n"}`)},
		{ID: "3", Name: "shell", Args: json.RawMessage(`{"command":"wc -l < notes.txt; exit 4"}`)},
		{ID: "4", Name: "read_file", Args: json.RawMessage(`{"path":"notes.txt","bogus":true}`)},
	}
	model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, ToolCalls: calls}}, nil
		}
		return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	var prompts syncBuffer
	agent, err := harness.New(model, &harness.Options{
		Tools:     w.Tools(),
		Approver:  ApproverFor(ModeAsk, TerminalApprover(strings.NewReader("n\ny\n"), &prompts)),
		Workspace: w.Dir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), harness.NewConversation(""), "go")
	if err != nil {
		t.Fatal(err)
	}
	results := res.Turn.Rounds[0].Results
	if len(results) != 4 {
		t.Fatalf("%d results", len(results))
	}
	if r := results[0]; r.IsError || !strings.Contains(r.FullText(), "     2\tbeta") || r.Meta["path"] != "notes.txt" {
		t.Errorf("read_file: %+v", r)
	}
	if r := results[1]; !r.IsError || !strings.Contains(r.FullText(), "did not approve") {
		t.Errorf("write_file was not refused: %s", r.FullText())
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("the refused write happened")
	}
	if r := results[2]; r.IsError || r.FullText() != "2\n[exit status 4]" || r.Stream != nil {
		t.Errorf("shell: %q (error %v)", r.FullText(), r.IsError)
	}
	if r := results[3]; !r.IsError || !strings.Contains(r.FullText(), "bogus") {
		t.Errorf("unknown argument accepted: %s", r.FullText())
	}
	if p := prompts.String(); strings.Count(p, "The agent wants to run") != 2 || strings.Contains(p, "read_file") {
		t.Errorf("prompts:\n%s", p)
	}
}

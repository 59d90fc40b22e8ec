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

// TestAskModeWithoutApproverRefuses: the zero Options are ask mode; an
// agent built with those tools and no Approver must refuse every call that
// would have been asked (fail closed), not run it.
func TestAskModeWithoutApproverRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     *Options
		approver harness.Approver
		wantFile bool
	}{
		{"ask, no approver", nil, nil, false},
		{"explicit ask, no approver", &Options{Mode: ModeAsk}, nil, false},
		{"ask, approver says yes", nil, func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) { return true, nil }, true},
		{"ask, approver says no", nil, func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) { return false, nil }, false},
		{"auto, no approver", &Options{Mode: ModeAuto}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := New(dir, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			calls := []harness.ToolCall{
				{ID: "1", Name: "write_file", Args: json.RawMessage(`{"path":"new.txt","content":"x"}`)},
				{ID: "2", Name: "read_file", Args: json.RawMessage(`{"path":"new.txt"}`)},
			}
			model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
				if req.Round == 1 {
					return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, ToolCalls: calls}}, nil
				}
				return &harness.Response{Message: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("done")}}}, nil
			})
			agent, err := harness.New(model, &harness.Options{Tools: w.Tools(), Approver: tc.approver, Workspace: w.Dir()})
			if err != nil {
				t.Fatal(err)
			}
			res, err := agent.Run(context.Background(), harness.NewConversation(""), "go")
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(dir, "new.txt"))
			if got := statErr == nil; got != tc.wantFile {
				t.Fatalf("file created %v, want %v", got, tc.wantFile)
			}
			wr := res.Turn.Rounds[0].Results[0]
			if wr.IsError == tc.wantFile {
				t.Fatalf("write_file IsError %v: %s", wr.IsError, wr.FullText())
			}
		})
	}
}

// TestAskModeToolCalledDirectly: a destructive tool of an ask-mode
// workspace called outside an agent (nobody asked) refuses too.
func TestAskModeToolCalledDirectly(t *testing.T) {
	w, dir := newTestWorkspace(t, &Options{Mode: ModeAsk}, nil)
	for _, ctx := range []context.Context{context.Background(), harness.WithCallInfo(context.Background(), harness.CallInfo{})} {
		res, err := tool(t, w, "write_file").Func(ctx, &harness.ToolCall{ID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"x.txt","content":"x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		mustFail(t, res, "nobody approved")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Fatal("the unapproved write happened")
	}
	// Read-only tools are never asked, so they run.
	if r := run(t, w, "list_dir", map[string]string{"path": "."}); r.IsError || strings.Contains(r.FullText(), "approv") {
		t.Fatalf("list_dir: %s", r.FullText())
	}
}

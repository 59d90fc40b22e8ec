package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tools/workspace"
)

// ExampleNew opens a workspace, lists the tools it offers with their risks,
// and calls read_file the way an agent would.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "workspace-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\nworld\n"), 0o644)

	ws, err := workspace.New(dir, &workspace.Options{Mode: workspace.ModeAsk})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()

	tools := ws.Tools()
	for _, t := range tools {
		fmt.Printf("%-10s %s\n", t.Spec.Name, t.Spec.Risk)
	}

	args, _ := json.Marshal(map[string]any{"path": "hello.txt", "limit": 1})
	res, err := tools[0].Func(context.Background(), &harness.ToolCall{ID: "call_1", Name: "read_file", Args: args})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.FullText())
	fmt.Println(res.Meta["path"], res.Meta["total_lines"])

	// Escapes are refused with an error the model can read.
	args, _ = json.Marshal(map[string]any{"path": "../etc/passwd"})
	res, _ = tools[0].Func(context.Background(), &harness.ToolCall{ID: "call_2", Name: "read_file", Args: args})
	fmt.Println(res.IsError, res.FullText())

	// Output:
	// read_file  read-only
	// list_dir   read-only
	// glob       read-only
	// grep       read-only
	// write_file destructive
	// edit_file  destructive
	//      1	hello
	// [hello.txt: lines 1-1 of 2; 1 more line — continue with offset=2]
	// hello.txt 2
	// true read_file: ../etc/passwd climbs above the workspace root: outside the workspace
}

// ExampleApproverFor wires a permission mode into an agent: read-only mode
// offers only the read-only tools, ask mode asks on the terminal before
// every destructive call, auto mode asks nothing.
func ExampleApproverFor() {
	dir, _ := os.MkdirTemp("", "workspace-example")
	defer os.RemoveAll(dir)
	mode, _ := workspace.ParseMode("read-only")
	ws, _ := workspace.New(dir, &workspace.Options{Mode: mode, Shell: true})
	defer ws.Close()

	opts := &harness.Options{
		Tools:     ws.Tools(),
		Approver:  workspace.ApproverFor(mode, workspace.TerminalApprover(os.Stdin, os.Stderr)),
		Workspace: ws.Dir(),
	}
	fmt.Println(len(opts.Tools), "tools offered in", mode, "mode")
	// Output: 4 tools offered in read-only mode
}

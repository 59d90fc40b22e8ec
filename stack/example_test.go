package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store/sqlite"
	"github.com/agentharness/harness/tools/recall"
	"github.com/agentharness/harness/tools/workspace"
)

// Example is the README's library snippet, complete: the workspace tools,
// the default stack (a ceiling that spills to the workspace, Collapse, the
// stuck policy, the turn budget, compaction and the recall tool its
// placeholders point at), every byte recorded in the transcript store, and
// a scripted model whose usage is counted (o200k, with the prompt cache).
func Example() {
	dir, _ := os.MkdirTemp("", "harness-example-")
	defer os.RemoveAll(dir)
	var log strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&log, "2026-12-01T10:%02d:%02d worker %d: ok\n", i/60%60, i%60, i%7)
	}
	log.WriteString("2026-12-01T11:00:00 worker 3: disk quota exceeded\n")
	// A tool whose output is far over the 24 KiB ceiling.
	jobLog := harness.Tool{
		Spec: harness.ToolSpec{Name: "job_log", Description: "The output of the last job.", Risk: harness.ReadOnly},
		Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(log.String()), nil
		},
	}

	ctx := context.Background()
	ws, _ := workspace.New(dir, nil) // read_file, list_dir, glob, grep, write_file, edit_file
	defer ws.Close()
	model := scripted.New(&scripted.Script{Steps: []scripted.Step{
		{Text: "Reading the job's output.", ToolCalls: []scripted.Call{{Name: "job_log"}}},
		{Text: "The job failed: worker 3 ran out of disk quota."},
	}}, nil) // or openai.New, anthropic.New
	st, _ := sqlite.Open(ctx, filepath.Join(dir, ".harness", "harness.db"), nil)
	defer st.Close()

	opts := &harness.Options{Tools: append(ws.Tools(), jobLog), Workspace: dir, Recorder: st, Observer: st.Observe}
	stack.New(&stack.Config{Recall: &recall.Options{Lookup: st.FullResult}}).Apply(opts)
	agent, err := harness.New(model, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	conv := harness.NewConversation("") // or st.Load(ctx, id) to continue one
	res, err := agent.Run(ctx, conv, "Why did the job fail?")
	if err != nil {
		fmt.Println(err)
		return
	}
	read := res.Turn.Rounds[0].Results[0]
	fmt.Println(res.Answer)
	fmt.Println(res.Outcome, res.Usage.Effective() > 0)
	for _, c := range read.Cuts {
		fmt.Println(c.Kind, strings.HasPrefix(c.Locator, ".harness/spill/"), len(read.FullText()) == log.Len())
	}
	fmt.Println(len(agent.Tools()), agent.Tools()[len(agent.Tools())-1].Name)
	// Output:
	// The job failed: worker 3 ran out of disk quota.
	// answered true
	// spilled true true
	// 8 recall
}

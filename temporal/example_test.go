package temporal_test

import (
	"context"
	"fmt"
	"log"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store/sqlite"
	htemporal "github.com/agentharness/harness/temporal"
	"github.com/agentharness/harness/tools/recall"
)

// A worker process: the engine records into the shared store, the journal
// sits beside it, and the activities and the workflow are registered on
// the task queue. A second process starts a turn and waits for it. (It
// needs a running cluster, so it is compiled, not run.)
func ExampleActivities_Register() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "harness.db", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	j, err := htemporal.OpenSQLiteJournal(ctx, "harness.db.journal")
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	var model harness.Model // openai.New(…), anthropic.New(…)
	// The default stack, as harness run and harness-temporal worker build
	// it: recall reads the shared store, spill files go under Workspace.
	opts := &harness.Options{Recorder: st, Workspace: "."}
	stack.New(&stack.Config{Recall: &recall.Options{Lookup: st.FullResult}}).Apply(opts)
	eng, err := harness.NewEngine(opts)
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, htemporal.DefaultTaskQueue, htemporal.WorkerOptions(worker.Options{}))
	(&htemporal.Activities{Engine: eng, Store: st, Model: model, Journal: j}).Register(w)
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	run, err := htemporal.StartTurn(ctx, c, htemporal.DefaultTaskQueue, htemporal.TurnInput{Conversation: "c_1", Input: "What does main.go do?"})
	if err != nil {
		log.Fatal(err)
	}
	var out htemporal.TurnOutput
	if err := run.Get(ctx, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Outcome, out.Answer)
}

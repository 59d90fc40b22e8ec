package temporal

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func workflowOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: WorkflowName}
}

// WorkerOptions returns o with what a worker of durable turns needs:
// session workers enabled (worker.Options.EnableSessionWorker), so that a
// turn can pin its tool steps to this worker (see TurnInput.Unpinned). A
// worker built without it runs every step but never a turn's pinned tool
// steps: a turn that finds no session-enabled worker within
// TurnInput.PinTimeout runs them unpinned.
func WorkerOptions(o worker.Options) worker.Options {
	o.EnableSessionWorker = true
	return o
}

// MaxInputBytes bounds a turn's input, which travels in the workflow's
// history (Temporal warns at 256 KB per payload).
const MaxInputBytes = 128 << 10

// WorkflowID is the id of the turns of a conversation: one id per
// conversation, so the cluster runs at most one turn of it at a time.
func WorkflowID(conv string) string { return "harness-turn-" + conv }

// StartTurn starts a turn of in.Conversation on the cluster's task queue
// and returns its run, whose Get waits for the TurnOutput. It fails while
// another turn of the conversation is running, and on an input larger than
// MaxInputBytes.
func StartTurn(ctx context.Context, c client.Client, taskQueue string, in TurnInput) (client.WorkflowRun, error) {
	switch {
	case in.Conversation == "":
		return nil, errors.New("harness temporal: a turn needs a conversation id")
	case len(in.Input) > MaxInputBytes:
		return nil, fmt.Errorf("harness temporal: the input has %d bytes; at most %d travel in a workflow's history", len(in.Input), MaxInputBytes)
	}
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       WorkflowID(in.Conversation),
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("harness temporal: starting a turn of %s: %w", in.Conversation, err)
	}
	return run, nil
}

// RegisterWorkflow registers only the workflow, for a replayer (see
// worker.NewWorkflowReplayer).
func (a *Activities) RegisterWorkflow(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(TurnWorkflow, workflowOptions())
}

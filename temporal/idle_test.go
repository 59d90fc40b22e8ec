package temporal_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/agentharness/harness"
	htemporal "github.com/agentharness/harness/temporal"
)

// TestDurableTurnIdleAfterApproval runs a durable turn in Temporal's test
// environment on a fake engine clock: the model asks for a deploy, whose
// approval nobody gives until the morning (the approver moves the clock
// nine hours); the next model step loads the conversation from the store,
// as every step does, and its view's Idle is the pause since round 1 was
// answered, so a policy that clears when the cache is cold sees it.
func TestDurableTurnIdleAfterApproval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := htemporal.OpenStore(ctx, filepath.Join(dir, "harness.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, err := htemporal.OpenJournal(ctx, filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()

	var (
		mu    sync.Mutex
		now   = time.Date(2026, 1, 2, 18, 0, 0, 0, time.UTC)
		idles = map[int][]time.Duration{} // per round: the Idle of every view built for it
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	deploy := harness.Tool{Spec: harness.ToolSpec{Name: "deploy", Description: "Deploys.", Risk: harness.Destructive},
		Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult("deployed"), nil
		}}
	eng, err := harness.NewEngine(&harness.Options{
		Tools: []harness.Tool{deploy}, Recorder: st, Now: clock,
		Approver: func(context.Context, harness.ToolCall, harness.ToolSpec) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(9 * time.Hour) // approved the next morning
			return true, nil
		},
		Policies: []harness.ViewPolicy{harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
			mu.Lock()
			defer mu.Unlock()
			idles[v.Round] = append(idles[v.Round], v.Idle)
			return nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
		if req.Round == 1 {
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "d1", Name: "deploy", Args: json.RawMessage(`{}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("deployed it")}}}, nil
	})

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	// The environment's clock is mocked, but it bounds real time too: a
	// workflow task held over a second counts as a deadlock and the test
	// stops after three seconds. A loaded machine must not fail the test;
	// only a hang should.
	env.SetWorkerOptions(htemporal.WorkerOptions(worker.Options{DeadlockDetectionTimeout: math.MaxInt64}))
	env.SetTestTimeout(10 * time.Minute)
	(&htemporal.Activities{Engine: eng, Store: st, Model: model, Journal: j}).Register(env)
	env.ExecuteWorkflow(htemporal.WorkflowName, htemporal.TurnInput{Conversation: "c_deploy", Input: "deploy it"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("the turn did not complete: %v", env.GetWorkflowError())
	}
	var out htemporal.TurnOutput
	if err := env.GetWorkflowResult(&out); err != nil || out.Outcome != harness.Answered || out.Rounds != 2 {
		t.Fatalf("turn output %+v, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Round 1's request, and the deploy step's rebuild of its view, come
	// first: nothing was answered before. Round 2's request follows the
	// night.
	for round, want := range map[int]time.Duration{1: 0, 2: 9 * time.Hour} {
		if len(idles[round]) == 0 || slices.ContainsFunc(idles[round], func(d time.Duration) bool { return d != want }) {
			t.Errorf("the views of round %d saw Idle %v, want %s", round, idles[round], want)
		}
	}
}

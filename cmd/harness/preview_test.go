package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/stack"
)

// TestPolicyFlagsPreview: --preview relevant shows the middle line the
// call asks for; head-tail (the default) does not; anything else is a
// usage error.
func TestPolicyFlagsPreview(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		if i == 1500 {
			b.WriteString("ERROR: disk quota exceeded on volume data7\n")
			continue
		}
		fmt.Fprintf(&b, "INFO: step %d ok\n", i)
	}
	log := b.String()
	for _, tc := range []struct {
		args  []string
		shown bool
		usage bool
	}{
		{args: nil, shown: true},
		{args: []string{"--preview", "head-tail"}},
		{args: []string{"--preview", "relevant"}, shown: true},
		{args: []string{"--preview", "middle"}, usage: true},
	} {
		sc, ok := policyConfig(t, append(tc.args, "--no-collapse"), tc.usage)
		if !ok {
			continue
		}
		fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(log), nil
		}, stack.New(&sc).Guards...)
		ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 1, Workspace: t.TempDir()})
		res, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "shell", Args: []byte(`{"command":"grep -n quota job.log"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(res.ModelText(), "disk quota exceeded"); got != tc.shown || len(res.Cuts) == 0 {
			t.Errorf("%v: the middle line shown %v, want %v (cuts %+v)", tc.args, got, tc.shown, res.Cuts)
		}
	}
}

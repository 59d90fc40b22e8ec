package guard_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// lockFile is a package-lock.json of 1,200 packages, zod among them.
func lockFile(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	var b strings.Builder
	for i := 0; i < 1200; i++ {
		name := fmt.Sprintf("pkg%04d", i)
		if i == 600 {
			name = "zod"
		}
		fmt.Fprintf(&b, "  \"node_modules/%s\": {\"version\": \"1.%d.0\"},\n", name, i)
	}
	return harness.TextResult(b.String()), nil
}

// With the Relevant preview, a spilled result shows its head and tail and
// the lines between that match what the agent is looking for — here the
// turn's question — each gap marked, the marker saying which lines are
// shown, why, and where the rest is.
func ExampleRelevant() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)

	policy := &guard.ResultPolicy{Preview: guard.Relevant{}}
	fn := harness.Chain(lockFile, policy.Guard())
	// The agent puts the transcript in the context of every call.
	conv := harness.NewConversation("c_demo")
	conv.Turns = []*harness.Turn{{Index: 1, Input: "Which version of zod does the project lock?"}}
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{
		Conversation: "c_demo", Turn: 1, Round: 1, Workspace: ws, Transcript: conv,
		Spec: harness.ToolSpec{Name: "read_file", Risk: harness.ReadOnly},
	})
	res, _ := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "read_file", Args: []byte(`{"path":"package-lock.json"}`)})

	cut := res.Cuts[0]
	fmt.Println(cut.Kind, cut.Locator, res.Bytes, "→", cut.BytesOut, "bytes")
	for _, line := range strings.Split(res.ModelText(), "\n") {
		if strings.Contains(line, "zod") || strings.HasPrefix(line, "… (") {
			fmt.Println(line)
		}
	}
	// Output:
	// spilled .harness/spill/c_demo/call_1-read_file.txt 60086 → 4621 bytes
	// [harness: read_file returned 60086 bytes, more than the 24576-byte limit for one result, so the whole result was saved to .harness/spill/c_demo/call_1-read_file.txt (1200 lines). Shown here: lines 1-58, 600-602, 1181-1200 (3998 bytes), some picked because they contain words of your call, your previous message or the task (zod, version). The other 56088 bytes are omitted, each gap marked by a line "… (lines a-b not shown)". Read it with read_file on that path (offset and limit count lines) or search it with grep on that path.]
	// … (lines 59-599 not shown, 27008 bytes)
	//   "node_modules/zod": {"version": "1.600.0"},
	// … (lines 603-1180 not shown, 29080 bytes)
}

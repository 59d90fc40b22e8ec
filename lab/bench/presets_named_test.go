package benchlab

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness"
)

// TestReadsNamedFile: a read counts as named when the turn's input holds
// the base name of the file it reads, whatever folder either names.
func TestReadsNamedFile(t *testing.T) {
	conv := harness.NewConversation("c")
	conv.Turns = append(conv.Turns, &harness.Turn{Index: 0, Input: "Based on the style guide at /docs/style-guide.md, write a showcase."})
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Transcript: conv, Turn: 0})
	for _, c := range []struct {
		args map[string]string
		want bool
	}{
		{map[string]string{"file_path": "/Users/me/project/docs/style-guide.md"}, true},
		{map[string]string{"path": `C:\project\docs\style-guide.md`}, true},
		{map[string]string{"file_path": "/Users/me/project/docs/other.md"}, false},
		{map[string]string{"command": "cat docs/style-guide.md"}, false},
		{map[string]string{"file_path": "/docs"}, false},
	} {
		args, _ := json.Marshal(c.args)
		if got := readsNamedFile(ctx, &harness.ToolCall{ID: "1", Name: "Read", Args: args}); got != c.want {
			t.Errorf("%v: named %v, want %v", c.args, got, c.want)
		}
	}
	if readsNamedFile(context.Background(), &harness.ToolCall{ID: "1", Name: "Read", Args: json.RawMessage(`{"file_path":"style-guide.md"}`)}) {
		t.Error("a call with no transcript counts as named")
	}
}

package guard

import (
	"path"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
)

// FuzzSpillPagePath: the path a tool result names (Meta["path"], from the
// tool's arguments) counts as a page of a spill file only when it lies
// under the spill folder, and then is returned clean, inside it.
func FuzzSpillPagePath(f *testing.F) {
	for _, s := range []string{".harness/spill/c/x.txt", "/ws/.harness/spill/c/x.txt", ".harness/spill/../../etc/passwd", "../.harness/spill/x", ".harness/spillover", "", "/other/.harness/spill/x", `.harness\spill\x`} {
		f.Add(s, "/ws")
	}
	f.Fuzz(func(t *testing.T, p, ws string) {
		res := &harness.ToolResult{Meta: map[string]any{"path": p}}
		got := spillPagePath(res, harness.CallInfo{Workspace: ws})
		if got == "" {
			return
		}
		if got != path.Clean(got) || (got != spill.Folder && !strings.HasPrefix(got, spill.Folder+"/")) {
			t.Fatalf("spillPagePath(%q, %q) = %q", p, ws, got)
		}
	})
}

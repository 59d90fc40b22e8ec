package proxy

import (
	"context"
	"io"
	"path/filepath"

	"github.com/agentharness/harness/internal/harnessdir"
	"github.com/agentharness/harness/spill"
)

// spillHint tells an agent that is not ours how to read a spill file: with
// its own file tools, on an absolute path.
const spillHint = "Read it with your file tools on that absolute path (a line range, or grep for what you need)."

// readHint is spillHint naming the client's own read tool.
func readHint(tool string) string {
	if tool == "" {
		return spillHint
	}
	return "Read it with your " + tool + " tool on that absolute path (a line range, or grep for what you need)."
}

// absSpill is a spill.Dir whose locators are absolute paths, since the
// agent behind the proxy runs its file tools from its own working
// directory, which the proxy does not know unless a launcher told it: a
// request on a client's route (Proxy.Route) spills under that client's
// workspace, with a hint naming its read tool.
type absSpill struct {
	dir spill.Dir
}

func (s *absSpill) Save(ctx context.Context, e spill.Entry, content io.Reader) (spill.Saved, error) {
	dir, hint := s.dir, spillHint
	if c := clientOf(ctx); c != nil {
		dir.Workspace, hint = c.Workspace, readHint(c.ReadTool)
	}
	saved, err := dir.Save(ctx, e, content)
	if err != nil {
		return saved, err
	}
	// Out of the project's git status; a failure only leaves it there.
	_ = harnessdir.IgnoreHarness(dir.Workspace)
	saved.Locator = filepath.Join(dir.Workspace, filepath.FromSlash(saved.Locator))
	saved.Hint = hint
	return saved, nil
}

// SpillStore returns the spill.Store the proxy's default guards use:
// files under <workspace>/.harness/spill/<conversation>/ (a spill.Dir),
// or under the workspace of the client whose route a request came on,
// named in markers by their absolute paths with a hint for the agent's own
// file tools, and a .harness/.gitignore that keeps them out of git.
// workspace should be absolute.
func SpillStore(workspace string) spill.Store {
	return &absSpill{dir: spill.Dir{Workspace: workspace}}
}

package proxy

import (
	"context"
	"io"
	"path/filepath"

	"github.com/agentharness/harness/spill"
)

// spillHint tells an agent that is not ours how to read a spill file: with
// its own file tools, on an absolute path.
const spillHint = "Read it with your file tools on that absolute path (a line range, or grep for what you need)."

// absSpill is a spill.Dir whose locators are absolute paths, since the
// agent behind the proxy runs its file tools from its own working
// directory, which the proxy does not know.
type absSpill struct {
	dir spill.Dir
}

func (s *absSpill) Save(ctx context.Context, e spill.Entry, content io.Reader) (spill.Saved, error) {
	saved, err := s.dir.Save(ctx, e, content)
	if err != nil {
		return saved, err
	}
	saved.Locator = filepath.Join(s.dir.Workspace, filepath.FromSlash(saved.Locator))
	saved.Hint = spillHint
	return saved, nil
}

// SpillStore returns the spill.Store the proxy's default guards use:
// files under <workspace>/.harness/spill/<conversation>/ (a spill.Dir),
// named in markers by their absolute paths with a hint for the agent's own
// file tools. workspace should be absolute.
func SpillStore(workspace string) spill.Store {
	return &absSpill{dir: spill.Dir{Workspace: workspace}}
}

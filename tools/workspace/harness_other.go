//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

// pinHarness does nothing: see inOwnHarness.
func (w *Workspace) pinHarness() {}

// inOwnHarness reports false: without link counts (see linkCount) no file
// needs the exemption.
func (w *Workspace) inOwnHarness(string) bool { return false }

// openInHarness refuses: it is only reached for a file with several links,
// which these platforms do not report.
func (w *Workspace) openInHarness(display, _ string, links uint64) (*os.File, fs.FileInfo, error) {
	return nil, nil, hardLinkError(display, links)
}

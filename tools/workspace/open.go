package workspace

import (
	"fmt"
	"io/fs"
	"os"
)

// openRegular opens the canonical path rel for reading through the root and
// checks, on the open descriptor, that it is a regular file with one hard
// link or inside the workspace's own .harness folder (see checkLinks).
func (w *Workspace) openRegular(display, rel string) (*os.File, fs.FileInfo, error) {
	f, err := w.root.OpenFile(rel, openReadFlags, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, unwrapPathError(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", display, unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, fmt.Errorf("%s is a directory", display)
		}
		return nil, nil, fmt.Errorf("%s is a %s: %w", display, fileKind(fi.Mode()), errSpecialFile)
	}
	// Checked again on the descriptor: a link made after absPath counts.
	// Such a file is read only when it is inside the workspace's own
	// .harness folder, and then through that folder's handle.
	if w.linksRefused(fi) {
		f.Close()
		return w.openInHarness(display, rel, linkCount(fi))
	}
	return f, fi, nil
}

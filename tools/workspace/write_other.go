//go:build !unix

package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// replaceFile writes data to the canonical path rel atomically: a
// temporary file in the same folder, then a rename over the target.
// Missing parent folders are created. On platforms without openat the
// write goes through the os.Root, which keeps it inside the workspace but
// checks .git/ and .harness/ only by the name absPath saw.
func (w *Workspace) replaceFile(rel string, data []byte, perm fs.FileMode, keepPerm bool) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := w.root.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("creating folder %s: %w", filepath.ToSlash(dir), unwrapPathError(err))
		}
	}
	tmp, err := tempName()
	if err != nil {
		return err
	}
	tmp = filepath.Join(dir, tmp)
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return unwrapPathError(err)
	}
	_, werr := f.Write(data)
	if werr == nil && keepPerm {
		werr = f.Chmod(perm)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = w.root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = w.root.Remove(tmp)
		return unwrapPathError(werr)
	}
	return nil
}

// seedProtected does nothing: without openat, folders are not tracked by
// identity.
func (w *Workspace) seedProtected() {}

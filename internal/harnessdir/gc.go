package harnessdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentharness/harness/spill"
)

// GCReport says what gC removed.
type GCReport struct {
	// Files and Bytes count the spill files removed and their sizes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Folders counts the conversation folders left empty and removed.
	Folders int `json:"folders"`
	// Kept counts the spill files younger than the cut-off.
	Kept int `json:"kept"`
	// Pinned counts the spill files old enough to go that were kept
	// because GCOptions.Keep holds them: the only full copy of a result.
	Pinned int `json:"pinned,omitempty"`
}

// GCOptions configure GCWith. Nil means none.
type GCOptions struct {
	// Keep reports whether the spill file at locator (workspace-relative,
	// slash-separated, as in harness.Cut.Locator) must be kept whatever
	// its age: a transcript store that holds only a preview of the result
	// points at it as the full copy.
	Keep func(locator string) bool
}

// gC removes the spill files under <workspace>/.harness/spill that were
// last modified more than olderThan ago, then the conversation folders it
// left empty. Only regular files are removed; symbolic links and anything
// else are left alone. A workspace without spill files is not an error.
//
// A streamed result that overflowed the ceiling is kept whole only in its
// spill file (the transcript keeps its preview), so gC loses its full text;
// GCWith keeps such files when told which they are.
func gC(ctx context.Context, workspace string, olderThan time.Duration) (GCReport, error) {
	return GCWith(ctx, workspace, olderThan, nil)
}

// GCWith is gC keeping, whatever their age, the files opts.Keep names.
func GCWith(ctx context.Context, workspace string, olderThan time.Duration, opts *GCOptions) (GCReport, error) {
	var rep GCReport
	if olderThan < 0 {
		return rep, fmt.Errorf("spill: gc: negative age %s", olderThan)
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return rep, fmt.Errorf("spill: gc: opening the workspace: %w", err)
	}
	defer root.Close()
	if fi, err := root.Lstat(spill.Folder); errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	} else if err != nil {
		return rep, fmt.Errorf("spill: gc: %w", err)
	} else if !fi.IsDir() {
		return rep, fmt.Errorf("spill: gc: %s is not a directory", spill.Folder)
	}
	cutoff := time.Now().Add(-olderThan)
	var folders []string
	err = fs.WalkDir(root.FS(), spill.Folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			if p != spill.Folder {
				folders = append(folders, p)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		} else if err != nil {
			return err
		}
		if !info.ModTime().Before(cutoff) {
			rep.Kept++
			return nil
		}
		if opts != nil && opts.Keep != nil && opts.Keep(p) {
			rep.Pinned++
			return nil
		}
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rep.Files++
		rep.Bytes += info.Size()
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("spill: gc: %w", err)
	}
	// Deepest first, so nested folders empty out before their parents.
	for i := len(folders) - 1; i >= 0; i-- {
		if root.Remove(folders[i]) == nil {
			rep.Folders++
		}
	}
	return rep, nil
}

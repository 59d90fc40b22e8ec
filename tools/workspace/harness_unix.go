//go:build unix

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// harnessID returns the identity (device and inode) of the workspace's own
// .harness folder: the folder named .harness directly in the root when it
// was first looked for (when the workspace opened, or on the first read
// that needs it if it did not exist yet). It is kept for the workspace's
// life, so no folder renamed or swapped in later under that name, and no
// .harness folder deeper in the tree, takes its place.
func (w *Workspace) harnessID() (fileID, bool) {
	w.protMu.Lock()
	defer w.protMu.Unlock()
	if !w.harnessKnown {
		top, err := w.root.Open(".")
		if err != nil {
			return fileID{}, false
		}
		defer top.Close()
		var st unix.Stat_t
		if unix.Fstatat(int(top.Fd()), ".harness", &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fileID{}, false
		}
		w.harness, w.harnessKnown = statID(&st), true
	}
	return w.harness, true
}

// pinHarness records the identity of the root's .harness folder when the
// workspace opens, before any swap could have renamed it.
func (w *Workspace) pinHarness() { w.harnessID() }

// inOwnHarness reports whether the canonical path rel lies, as the tree is
// now, inside the workspace's own .harness folder: its first component is
// that folder by identity, whatever it is called. It answers absPath's
// check; openInHarness is the one that decides what is read.
func (w *Workspace) inOwnHarness(rel string) bool {
	id, ok := w.harnessID()
	first := splitPath(rel)[0]
	if !ok || first == "." || first == "" || first == ".." {
		return false
	}
	top, err := w.root.Open(".")
	if err != nil {
		return false
	}
	defer top.Close()
	var st unix.Stat_t
	if unix.Fstatat(int(top.Fd()), first, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR && statID(&st) == id
}

// openInHarness opens the canonical path rel for reading when it lies
// inside the workspace's own .harness folder, race-free: the first
// component is opened from the root and must be that folder by identity
// (on the open descriptor), and every further component is opened relative
// to the one before without following symbolic links. So the file read is
// one that was inside that folder when it was opened, whatever is renamed
// or exchanged meanwhile. Otherwise it fails with errHardLink.
func (w *Workspace) openInHarness(display, rel string, links uint64) (*os.File, fs.FileInfo, error) {
	refused := hardLinkError(display, links)
	id, ok := w.harnessID()
	parts := splitPath(rel)
	if !ok || len(parts) < 2 {
		return nil, nil, refused
	}
	top, err := w.root.Open(".")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, unwrapPathError(err))
	}
	fd, err := unix.Dup(int(top.Fd()))
	top.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, err)
	}
	const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for i, name := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, name, dirFlags, 0)
		unix.Close(fd)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: opening folder %s: %w", display, filepath.ToSlash(filepath.Join(parts[:i+1]...)), err)
		}
		fd = next
		if i == 0 {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || statID(&st) != id {
				unix.Close(fd)
				return nil, nil, refused
			}
		}
	}
	ffd, err := unix.Openat(fd, parts[len(parts)-1], unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(fd)
	if errors.Is(err, unix.ELOOP) {
		return nil, nil, fmt.Errorf("%s changed after the path was checked: %w", display, errOutside)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, err)
	}
	f := os.NewFile(uintptr(ffd), display)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is no longer a regular file (it changed after the path was checked): %w", display, errSpecialFile)
		}
		return nil, nil, err
	}
	return f, fi, nil
}

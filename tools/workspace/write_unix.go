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

// replaceFile writes data to the canonical path rel atomically: a
// temporary file in the same folder, then a rename over the target, so a
// crash or a full disk never leaves a half-written file and a hard link to
// something else is replaced rather than written through. Missing parent
// folders are created. keepPerm applies perm exactly (an existing file's
// bits); otherwise perm is filtered by the umask like any new file.
//
// The protection of .git/ and .harness/ holds at the moment of the write,
// not only when absPath checked the path: the parent folder is opened one
// component at a time from the root without following symbolic links, each
// folder is refused if it is a protected folder by identity (device and
// inode, whatever it is called now), and the temporary file is created,
// renamed and, on failure, removed through that folder's handle. A link or
// folder swapped in after the check makes the write fail; it cannot
// redirect it.
func (w *Workspace) replaceFile(rel string, data []byte, perm fs.FileMode, keepPerm bool) error {
	dirfd, err := w.openParent(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	tmp, err := tempName()
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil && keepPerm {
		werr = f.Chmod(perm)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// Checked again just before the rename: the folder held by
		// handle may have been renamed to a protected name meanwhile.
		werr = w.refuseProtected(dirfd, filepath.Dir(rel))
	}
	if werr == nil {
		werr = unix.Renameat(dirfd, tmp, dirfd, filepath.Base(rel))
	}
	if werr != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return unwrapPathError(werr)
	}
	return nil
}

// openParent opens the folder dir (canonical, relative to the root),
// creating missing folders, and returns its descriptor. Every component is
// opened relative to the previous one with O_NOFOLLOW, so the path the
// resolver checked is the path used: a component that has become a
// symbolic link fails the open.
func (w *Workspace) openParent(dir string) (int, error) {
	top, err := w.root.Open(".")
	if err != nil {
		return -1, unwrapPathError(err)
	}
	fd, err := unix.Dup(int(top.Fd()))
	top.Close()
	if err != nil {
		return -1, err
	}
	w.noteProtected(fd)
	walked := "."
	for _, name := range splitPath(dir) {
		if name == "." || name == "" {
			continue
		}
		walked = filepath.Join(walked, name)
		next, err := openDirAt(fd, name)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("opening folder %s: %w", filepath.ToSlash(walked), err)
		}
		fd = next
		if err := w.refuseProtected(fd, walked); err != nil {
			unix.Close(fd)
			return -1, err
		}
		w.noteProtected(fd)
	}
	return fd, nil
}

// openDirAt opens the folder name inside dirfd without following a
// symbolic link, creating it when it does not exist.
func openDirAt(dirfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(dirfd, name, 0o777); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return -1, fmt.Errorf("it is no longer a folder (it changed after the path was checked): %w", errOutside)
	}
	return fd, err
}

func statID(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} }

// seedProtected records the root's protected folders when the workspace
// opens, before any swap could have renamed them.
func (w *Workspace) seedProtected() {
	top, err := w.root.Open(".")
	if err != nil {
		return
	}
	defer top.Close()
	w.noteProtected(int(top.Fd()))
}

// noteProtected records the identity of the protected folders directly
// inside the folder dirfd (.git, .harness, in any letter case the file
// system answers to), so that the same folder is recognised later under
// any other name. The set only grows: a folder once seen named .git or
// .harness stays protected for the workspace's life, which errs on the
// side of refusing.
func (w *Workspace) noteProtected(dirfd int) {
	for _, name := range protectedDirs {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		w.protMu.Lock()
		if w.protected == nil {
			w.protected = map[fileID]bool{}
		}
		w.protected[statID(&st)] = true
		w.protMu.Unlock()
	}
}

// refuseProtected returns errProtected when the folder held by dirfd is a
// protected folder seen before under its own name.
func (w *Workspace) refuseProtected(dirfd int, shown string) error {
	var st unix.Stat_t
	if err := unix.Fstat(dirfd, &st); err != nil {
		return err
	}
	w.protMu.Lock()
	hit := w.protected[statID(&st)]
	w.protMu.Unlock()
	if hit {
		return fmt.Errorf("folder %s is now a protected folder (.git or .harness, renamed or swapped in after the check): %w", filepath.ToSlash(shown), errProtected)
	}
	return nil
}

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Errors of the jail. resolve wraps them with the path concerned, so test
// them with errors.Is.
var (
	// errOutside: the path, or a symbolic link on the way to it, leads
	// outside the workspace.
	errOutside = errors.New("outside the workspace")
	// errSpecialFile: the path names a device, FIFO or socket.
	errSpecialFile = errors.New("not a regular file or directory")
	// errProtected: a write into .git/ or .harness/.
	errProtected = errors.New("protected folder")
	// errInvalidPath: the path is empty or contains a NUL byte.
	errInvalidPath = errors.New("invalid path")
	// errHardLink: a regular file with more than one hard link, outside
	// the workspace's own .harness/ folder (the one in the root, known by
	// its identity, not by a name), while Options.AllowHardLinks is off. Another link may be
	// a file outside the workspace (ln /etc/passwd x), and nothing on the
	// file tells where its other names are.
	errHardLink = errors.New("a file with several hard links")
)

// maxSymlinkHops is the number of symbolic links followed while resolving
// one path, the same bound Linux uses (ELOOP after 40).
const maxSymlinkHops = 40

// protectedDirs are folders the tools may read but never write: a write
// into .git can rewrite history or hooks that run on the user's next
// commit, and .harness holds the spill files and state of harness itself.
var protectedDirs = []string{".git", ".harness"}

// absPath maps path, as a model would send it, to an absolute path inside
// the workspace with every symbolic link resolved. Relative paths are taken
// from the root; absolute paths must lie inside it. It refuses, with an
// error wrapping errOutside, errSpecialFile, errProtected, errInvalidPath,
// errHardLink or fs.ErrNotExist:
//   - ".." that climbs above the root, and absolute paths outside it;
//   - symbolic links (the last component or any parent directory) whose
//     target lies outside the root, and chains of more than 40 links;
//   - devices, FIFOs and sockets;
//   - for reads, regular files with more than one hard link, outside
//     the root's own .harness/ folder, unless Options.AllowHardLinks is set (errHardLink);
//   - for reads, paths that do not exist;
//   - for writes (forWrite), directories, the root itself, and anything in
//     a .git or .harness folder at any depth (compared case-insensitively,
//     for case-insensitive file systems).
//
// For writes, missing parent directories are allowed (write_file creates
// them). ".." is applied lexically to the path as given and physically to
// symbolic link targets, so the result is the file the kernel would open.
//
// absPath checks the tree as it is now; the tools also do every operation
// through an os.Root, so a tree changed between the check and the use still
// cannot lead outside.
func (w *Workspace) absPath(path string, forWrite bool) (string, error) {
	rel, _, err := w.resolve(path, forWrite)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.dir, rel), nil
}

// resolve returns the canonical path relative to the root ("." for the
// root), and the target's Lstat info (nil when it does not exist yet).
func (w *Workspace) resolve(path string, forWrite bool) (string, fs.FileInfo, error) {
	if path == "" {
		return "", nil, fmt.Errorf("empty path: %w", errInvalidPath)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", nil, fmt.Errorf("%q contains a NUL byte: %w", path, errInvalidPath)
	}
	var rel string
	if filepath.IsAbs(path) {
		r, ok := w.within(filepath.Clean(path))
		if !ok {
			return "", nil, fmt.Errorf("%s is %w %s", path, errOutside, w.dir)
		}
		rel = r
	} else {
		rel = filepath.Clean(path)
	}
	if escapes(rel) {
		return "", nil, fmt.Errorf("%s climbs above the workspace root: %w", path, errOutside)
	}
	cur, fi, err := w.walk(path, rel, forWrite)
	if err != nil {
		return "", nil, err
	}
	if fi != nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return "", nil, fmt.Errorf("%s is a %s: %w", path, fileKind(fi.Mode()), errSpecialFile)
	}
	if !forWrite {
		// A write replaces the name instead of writing through the link,
		// so only reads (edit_file's included, in openRegular) are refused.
		if err := w.checkLinks(path, cur, fi); err != nil {
			return "", nil, err
		}
	}
	if forWrite {
		switch {
		case cur == ".":
			return "", nil, fmt.Errorf("%s is the workspace root, not a file", path)
		case fi != nil && fi.IsDir():
			return "", nil, fmt.Errorf("%s is a directory, not a file", path)
		}
		if p := protectedPart(cur); p != "" {
			return "", nil, fmt.Errorf("%s is inside %s/, which the tools may read but never write: %w", path, p, errProtected)
		}
	}
	return cur, fi, nil
}

// checkLinks refuses a regular file with more than one hard link outside
// the workspace's own .harness folder (by identity, see harnessID) unless
// Options.AllowHardLinks is set (see errHardLink). rel is the canonical
// path, path the one shown. openRegular decides again, race-free, on what
// it opens.
func (w *Workspace) checkLinks(path, rel string, fi fs.FileInfo) error {
	if !w.linksRefused(fi) || w.inOwnHarness(rel) {
		return nil // spill files and harness's own state
	}
	return hardLinkError(path, linkCount(fi))
}

// linksRefused reports whether fi is a regular file with several hard
// links that Options.AllowHardLinks does not allow.
func (w *Workspace) linksRefused(fi fs.FileInfo) bool {
	return fi != nil && fi.Mode().IsRegular() && !w.opts.AllowHardLinks && linkCount(fi) > 1
}

func hardLinkError(path string, links uint64) error {
	return fmt.Errorf("%s has %d hard links; the tools refuse such files, since another link may be a file outside the workspace: %w",
		path, links, errHardLink)
}

// walk resolves rel component by component, following symbolic links
// inside the jail. path is only used in messages.
func (w *Workspace) walk(path, rel string, forWrite bool) (string, fs.FileInfo, error) {
	todo := splitPath(rel)
	cur := "."
	var fi fs.FileInfo
	hops := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".", "":
			continue
		case "..":
			// Only symbolic link targets bring ".." here; cur has no links
			// in it, so its parent is its lexical parent.
			if cur == "." {
				return "", nil, fmt.Errorf("%s: a symbolic link climbs above the workspace root: %w", path, errOutside)
			}
			cur = filepath.Dir(cur)
			fi = nil
			continue
		}
		next := filepath.Join(cur, name)
		info, err := w.root.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if !forWrite {
				return "", nil, fmt.Errorf("%s does not exist (resolved as %s): %w", path, filepath.ToSlash(next), fs.ErrNotExist)
			}
			// The rest will be created, so nothing in it is a link yet; a
			// ".." brought in by a link target cannot be resolved physically
			// through a missing directory, so it is refused.
			if slicesContain(todo, "..") {
				return "", nil, fmt.Errorf("%s: a symbolic link leads through the missing directory %s with \"..\": %w", path, filepath.ToSlash(next), errOutside)
			}
			joined := filepath.Join(append([]string{next}, todo...)...)
			return joined, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			hops++
			if hops > maxSymlinkHops {
				return "", nil, fmt.Errorf("%s: more than %d symbolic links (a loop?)", path, maxSymlinkHops)
			}
			target, err := w.root.Readlink(next)
			if err != nil {
				return "", nil, fmt.Errorf("%s: reading symbolic link %s: %w", path, filepath.ToSlash(next), unwrapPathError(err))
			}
			if target == "" {
				return "", nil, fmt.Errorf("%s: symbolic link %s is empty", path, filepath.ToSlash(next))
			}
			if filepath.IsAbs(target) {
				r, ok := w.within(filepath.Clean(target))
				if !ok {
					return "", nil, fmt.Errorf("%s: symbolic link %s points to %s, %w", path, filepath.ToSlash(next), target, errOutside)
				}
				cur = "."
				todo = append(splitPath(r), todo...)
			} else {
				todo = append(splitPath(target), todo...)
			}
			fi = nil
			continue
		}
		if len(todo) > 0 && !info.IsDir() {
			return "", nil, fmt.Errorf("%s: %s is not a directory", path, filepath.ToSlash(next))
		}
		cur, fi = next, info
	}
	if fi == nil {
		// The path resolved to the root, or a ".." brought it back to a
		// directory already walked; stat the result.
		info, err := w.root.Lstat(cur)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
		}
		fi = info
	}
	return cur, fi, nil
}

// within returns abs relative to the workspace root when it lies inside the
// root, given either as resolved or as the caller spelled it.
func (w *Workspace) within(abs string) (string, bool) {
	for _, base := range []string{w.dir, w.given} {
		r, err := filepath.Rel(base, abs)
		if err == nil && !escapes(r) && !filepath.IsAbs(r) {
			return r, true
		}
	}
	return "", false
}

// slashRel returns the workspace-relative slash form of a canonical path, as
// shown to the model and put in Meta["path"].
func slashRel(rel string) string { return filepath.ToSlash(rel) }

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// protectedPart returns the protected folder name rel is inside, or "".
func protectedPart(rel string) string {
	for _, part := range splitPath(rel) {
		for _, p := range protectedDirs {
			if strings.EqualFold(part, p) {
				return part
			}
		}
	}
	return ""
}

// isProtectedDir reports whether a directory entry name is .git or .harness,
// the folders the walkers skip unless asked to search inside them.
func isProtectedDir(name string) bool {
	for _, p := range protectedDirs {
		if strings.EqualFold(name, p) {
			return true
		}
	}
	return false
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	}
	return "special file"
}

// unwrapPathError drops the *fs.PathError wrapper, whose path would be the
// host path of the root and mean nothing to the model.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

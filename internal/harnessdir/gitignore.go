package harnessdir

import (
	"errors"
	"io/fs"
	"os"
	"path"

	"github.com/agentharness/harness/spill"
)

// gitignoreAll is the .gitignore IgnoreHarness writes: nothing in the
// .harness folder is the project's.
const gitignoreAll = "# written by harness: spill files and the transcript store are not the project's\n*\n"

// IgnoreHarness writes workspace/.harness/.gitignore ignoring everything
// in .harness (creating the folder), unless a .gitignore is there
// already, so spill files and a store kept there stay out of the
// project's git status. It writes through an os.Root at the workspace.
func IgnoreHarness(workspace string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	dir := path.Dir(spill.Folder)
	// Every spill asks: a look that finds it takes no lock on the folder,
	// where an exclusive create would, in every process sharing it.
	if _, err := root.Lstat(path.Join(dir, ".gitignore")); err == nil {
		return nil
	}
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := root.OpenFile(path.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(gitignoreAll); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

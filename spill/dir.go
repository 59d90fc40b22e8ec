package spill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
)

// Folder is where [Dir] keeps spill files, relative to the workspace root.
const Folder = ".harness/spill"

// DefaultHint is the retrieval hint of a file saved by [Dir]: how an agent
// reads it back with the workspace tools.
const DefaultHint = "Read it with read_file on that path (offset and limit count lines) or search it with grep on that path."

// Dir is the [Store] that writes spill files into a workspace:
// <Workspace>/.harness/spill/<conversation>/<call>-<tool>.<ext>. Folders
// are created 0700, files 0600 with O_EXCL; a name already taken gets a
// numbered suffix (call ids repeat when a model reuses them). All access
// goes through an [os.Root] at the workspace, so a symbolic link inside
// .harness cannot send a write outside the workspace.
type Dir struct {
	// Workspace is the workspace root. It must exist.
	Workspace string
}

// maxNameAttempts bounds the search for a free file name.
const maxNameAttempts = 100

// copyBufferSize is the fixed working set of one Save.
const copyBufferSize = 64 << 10

// Save writes content to a new file and returns its workspace-relative
// path. A cancelled ctx stops the copy; the partial file is removed.
func (d *Dir) Save(ctx context.Context, e Entry, content io.Reader) (Saved, error) {
	if d == nil || d.Workspace == "" {
		return Saved{}, errors.New("spill: no workspace to save into")
	}
	root, err := os.OpenRoot(d.Workspace)
	if err != nil {
		return Saved{}, fmt.Errorf("spill: opening the workspace: %w", err)
	}
	defer root.Close()
	folder := path.Join(Folder, conversationFolder(e.Conversation))
	ext := e.Ext
	if ext != "json" {
		ext = "txt"
	}
	f, rel, err := create(root, folder, safeName(e.CallID, maxCallName)+"-"+safeName(e.Tool, maxToolName), ext)
	if err != nil {
		return Saved{}, err
	}
	n, err := copyContext(ctx, f, content)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(rel)
		return Saved{}, fmt.Errorf("spill: writing %s: %w", rel, err)
	}
	return Saved{Locator: rel, Bytes: n, Hint: DefaultHint}, nil
}

// create opens a new file folder/base.ext (base-2.ext, … when taken) in
// root, creating folder (0700) when it is missing: the folder of a
// conversation exists from its first spill on, so most saves skip the
// directory walk.
func create(root *os.Root, folder, base, ext string) (*os.File, string, error) {
	made := false
	for i := 1; i <= maxNameAttempts; i++ {
		name := base
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		rel := path.Join(folder, name+"."+ext)
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			return f, rel, nil
		case errors.Is(err, fs.ErrNotExist) && !made:
			if err := root.MkdirAll(folder, 0o700); err != nil {
				return nil, "", fmt.Errorf("spill: creating %s: %w", folder, err)
			}
			made = true
			i-- // the same name again, in the folder made
		case !errors.Is(err, fs.ErrExist):
			return nil, "", fmt.Errorf("spill: creating %s: %w", rel, err)
		}
	}
	return nil, "", fmt.Errorf("spill: creating %s: no free name among %d", path.Join(folder, base+"."+ext), maxNameAttempts)
}

// copyContext copies src to dst, checking ctx between chunks, with a fixed
// buffer (io.Copy would use the reader's WriteTo, which may buffer all).
func copyContext(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, copyBufferSize)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := src.Read(buf)
		if nr > 0 {
			nw, werr := dst.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
			if nw != nr {
				return n, io.ErrShortWrite
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

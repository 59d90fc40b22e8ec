package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentharness/harness"
)

func (w *Workspace) writeSpec() harness.ToolSpec {
	return harness.ToolSpec{
		Name: "write_file",
		Description: "Create a file in the workspace or replace its whole content. " +
			"Arguments: path (relative to the workspace root; missing parent folders are created); content (the complete new text of the file). " +
			"The write is atomic (a temporary file renamed over the target) and keeps an existing file's permissions. " +
			"To change part of an existing file, prefer edit_file. " +
			"Refuses paths outside the workspace and anything inside .git/ or .harness/.",
		InputSchema: objectSchema([]string{"path", "content"},
			stringField("path", "File to write, relative to the workspace root."),
			stringField("content", "The complete content of the file."),
		),
		Risk: harness.Destructive,
	}
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

func (w *Workspace) writeFile(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "write_file"
	var a writeArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if a.Path == nil || *a.Path == "" {
		return failf(tool, "path is required"), nil
	}
	if a.Content == nil {
		return failf(tool, "content is required (send \"\" for an empty file)"), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, fi, err := w.resolve(*a.Path, true)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	show := slashRel(rel)
	data := []byte(*a.Content)
	perm, created := fs.FileMode(0o666), fi == nil
	if !created {
		perm = fi.Mode().Perm()
	}
	if err := w.replaceFile(rel, data, perm, !created); err != nil {
		return failf(tool, "writing %s: %v", show, err), nil
	}
	lines := countLines(data)
	what := "new file"
	if !created {
		what = fmt.Sprintf("replaced %d bytes", fi.Size())
	}
	res := harness.TextResult(fmt.Sprintf("wrote %s: %d bytes, %s (%s)", show, len(data), plural(lines, "line", "lines"), what))
	res.Meta = map[string]any{"path": show, "bytes": len(data), "lines": int(lines), "created": created}
	return res, nil
}

// replaceFile writes data to the canonical path rel atomically: a
// temporary file in the same folder, then a rename over the target, so a
// crash or a full disk never leaves a half-written file and a hard link to
// something else is replaced rather than written through. Missing parent
// folders are created. keepPerm applies perm exactly (an existing file's
// bits); otherwise perm is filtered by the umask like any new file.
func (w *Workspace) replaceFile(rel string, data []byte, perm fs.FileMode, keepPerm bool) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := w.root.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("creating folder %s: %w", filepath.ToSlash(dir), unwrapPathError(err))
		}
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".harness-write-"+hex.EncodeToString(rnd[:])+".tmp")
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

// countLines counts lines the way read_file numbers them: a last line
// without a newline counts.
func countLines(data []byte) int64 {
	n := int64(bytes.Count(data, []byte{'\n'}))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

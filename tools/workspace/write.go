package workspace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"

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

// fileID identifies a file whatever its name: device and inode.
type fileID struct{ dev, ino uint64 }

// tempName returns the name of a fresh temporary file for replaceFile.
func tempName() (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return ".harness-write-" + hex.EncodeToString(rnd[:]) + ".tmp", nil
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

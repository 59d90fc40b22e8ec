package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentharness/harness"
)

const (
	// maxListEntries is how many entries list_dir shows.
	maxListEntries = 1000
	// maxListCollect is how many entries list_dir sorts; a larger folder
	// is counted in full but shown from its first entries on disk.
	maxListCollect = 50000
)

func (w *Workspace) listSpec() harness.ToolSpec {
	return harness.ToolSpec{
		Name: "list_dir",
		Description: fmt.Sprintf("List a directory of the workspace: one entry per line, sorted by name, "+
			"folders with a trailing /, files with their size in bytes, symbolic links with their target. "+
			"Arguments: path (relative to the workspace root, default the root). "+
			"Limits: at most %d entries and %d bytes, with a closing line counting folders, files and what was left out. "+
			"Not recursive: use glob to find files by name pattern at any depth.",
			maxListEntries, w.opts.MaxOutputBytes),
		InputSchema: objectSchema(nil,
			stringField("path", "Directory to list, relative to the workspace root (default \".\", the root)."),
		),
		Risk: harness.ReadOnly,
	}
}

type listArgs struct {
	Path string `json:"path"`
}

type listEntry struct {
	name string
	info fs.FileInfo
}

func (w *Workspace) listDir(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "list_dir"
	var a listArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	rel, fi, err := w.resolve(a.Path, false)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	show := slashRel(rel)
	if !fi.IsDir() {
		return failf(tool, "%s is a file (%d bytes), not a directory; use read_file to read it", show, fi.Size()), nil
	}
	entries, total, err := w.readEntries(ctx, rel)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failf(tool, "reading %s: %v", show, unwrapPathError(err)), nil
	}
	return w.listResult(rel, show, entries, total), nil
}

// readEntries reads the folder rel: up to maxListCollect entries sorted by
// name, and how many it holds in all. Entries removed while listing are
// left out.
func (w *Workspace) readEntries(ctx context.Context, rel string) ([]listEntry, int, error) {
	d, err := w.root.Open(rel)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	var (
		entries []listEntry
		total   int
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		batch, err := d.ReadDir(1024)
		for _, e := range batch {
			total++
			if len(entries) >= maxListCollect {
				continue
			}
			info, ierr := e.Info()
			if ierr != nil {
				continue // removed while listing
			}
			entries = append(entries, listEntry{name: e.Name(), info: info})
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	return entries, total, nil
}

// listResult is list_dir's result: one line per entry, as many as the
// output bound holds, and a footer counting folders, files and what was
// not shown.
func (w *Workspace) listResult(rel, show string, entries []listEntry, total int) *harness.ToolResult {
	var (
		b                   strings.Builder
		dirs, files, others int
		shown               int
	)
	for _, e := range entries {
		m := e.info.Mode()
		switch {
		case m.IsDir():
			dirs++
		case m.IsRegular():
			files++
		default:
			others++
		}
		if shown >= maxListEntries || b.Len() > w.opts.MaxOutputBytes-footerReserve {
			continue
		}
		line := w.entryLine(filepath.Join(rel, e.name), e.name, e.info)
		if b.Len()+len(line) > w.opts.MaxOutputBytes-footerReserve {
			continue
		}
		b.WriteString(line)
		shown++
	}
	label := show
	if label == "." {
		label = ". (workspace root)"
	}
	fmt.Fprintf(&b, "[%s: %s — %s, %s", label, plural(int64(total), "entry", "entries"),
		plural(int64(dirs), "folder", "folders"), plural(int64(files), "file", "files"))
	if others > 0 {
		fmt.Fprintf(&b, ", %d other", others)
	}
	if left := total - shown; left > 0 {
		fmt.Fprintf(&b, "; %d not shown — use glob with a narrower pattern", left)
	}
	b.WriteString("]")
	meta := map[string]any{"path": show, "entries": total, "shown": shown}
	return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(b.String())}, Meta: meta}
}

// entryLine formats one list_dir line.
func (w *Workspace) entryLine(rel, name string, info fs.FileInfo) string {
	name = validText([]byte(name))
	m := info.Mode()
	switch {
	case m.IsDir():
		return name + "/\n"
	case m.IsRegular():
		return fmt.Sprintf("%s  (%d bytes)\n", name, info.Size())
	case m&fs.ModeSymlink != 0:
		target, err := w.root.Readlink(rel)
		if err != nil {
			return name + " -> ?  (symbolic link)\n"
		}
		note := "symbolic link"
		if _, _, err := w.resolve(rel, false); errors.Is(err, errOutside) {
			// Say so now, rather than let the model find out by trying.
			note = "symbolic link out of the workspace; the tools will not follow it"
		}
		return fmt.Sprintf("%s -> %s  (%s)\n", name, validText([]byte(target)), note)
	}
	return fmt.Sprintf("%s  (%s)\n", name, fileKind(m))
}

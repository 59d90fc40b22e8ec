package workspace

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
)

// maxReadLimit is the largest limit read_file accepts.
const maxReadLimit = 100000

// footerReserve is kept free in a page for the closing status line (plus
// the length of the path it names).
const footerReserve = 200

func (w *Workspace) readSpec() harness.ToolSpec {
	o := w.opts
	return harness.ToolSpec{
		Name: "read_file",
		Description: fmt.Sprintf("Read a text file in the workspace, with line numbers (like cat -n). "+
			"Arguments: path (relative to the workspace root); offset (1-based line to start at, default 1; negative counts from the end, -50 = the last 50 lines); "+
			"limit (lines to return, default %d). "+
			"Limits: one page is at most %d bytes and lines longer than %d bytes are cut, both marked; "+
			"the closing line gives the total line count and the offset of the next page. "+
			"Refuses binary files, directories (use list_dir) and paths outside the workspace. "+
			"Also pages spilled tool results under .harness/spill/.",
			defaultReadLines, o.ReadMaxBytes, o.MaxLineBytes),
		InputSchema: objectSchema([]string{"path"},
			stringField("path", "File to read, relative to the workspace root (an absolute path inside the workspace also works)."),
			field{"offset", map[string]any{"type": "integer", "description": "1-based line number to start at (default 1). Negative values count from the end: -100 starts 100 lines before the end."}},
			intField("limit", fmt.Sprintf("Maximum number of lines to return (default %d).", defaultReadLines), 1, maxReadLimit),
		),
		Risk: harness.ReadOnly,
	}
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Limit  int64  `json:"limit"`
}

func (w *Workspace) readFile(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "read_file"
	var a readArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if a.Path == "" {
		return failf(tool, "path is required"), nil
	}
	if a.Limit < 0 || a.Limit > maxReadLimit {
		return failf(tool, "limit must be between 1 and %d, got %d", maxReadLimit, a.Limit), nil
	}
	if a.Limit == 0 {
		a.Limit = defaultReadLines
	}
	rel, fi, err := w.resolve(a.Path, false)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	show := slashRel(rel)
	if fi.IsDir() {
		return failf(tool, "%s is a directory; use list_dir or glob to see what it holds", show), nil
	}
	f, info, err := w.openRegular(show, rel)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	defer f.Close()

	sample := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, sample)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return failf(tool, "reading %s: %v", show, unwrapPathError(err)), nil
	}
	sample = sample[:n]
	if why := binaryReason(sample); why != "" {
		return failf(tool, "%s is a binary file (%s, %d bytes: %s); read_file shows text files only", show, contentType(sample), info.Size(), why), nil
	}

	p, err := w.readPage(ctx, f, a.Offset, a.Limit, len(show))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failf(tool, "reading %s: %v", show, unwrapPathError(err)), nil
	}
	// Meta numbers are plain ints, the type a consumer will assert.
	meta := map[string]any{"path": show, "total_lines": int(p.total), "bytes": info.Size()}
	if p.total == 0 {
		return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(fmt.Sprintf("[%s: empty file (0 lines)]", show))}, Meta: meta}, nil
	}
	if p.start > p.total {
		res := failf(tool, "offset %d is past the end of %s, which has %s; the last page starts at offset %d",
			a.Offset, show, plural(p.total, "line", "lines"), max(1, p.total-int64(a.Limit)+1))
		res.Meta = meta
		return res, nil
	}
	last := p.start + p.shown - 1
	meta["first_line"], meta["last_line"] = int(p.start), int(last)
	more := last < p.total
	meta["more"] = more
	var b strings.Builder
	b.Grow(len(p.text) + footerReserve)
	b.WriteString(p.text)
	fmt.Fprintf(&b, "[%s: lines %d-%d of %d", show, p.start, last, p.total)
	if more {
		meta["next_offset"] = int(last + 1)
		fmt.Fprintf(&b, "; %s — continue with offset=%d", plural(p.total-last, "more line", "more lines"), last+1)
	} else {
		b.WriteString(" (end of file)")
	}
	if p.cut > 0 {
		fmt.Fprintf(&b, "; %s cut at %d bytes", plural(int64(p.cut), "long line", "long lines"), w.opts.MaxLineBytes)
		meta["lines_cut"] = p.cut
	}
	b.WriteString("]")
	return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(b.String())}, Meta: meta}, nil
}

// page is one read_file page.
type page struct {
	text  string
	start int64 // first line shown (1-based)
	shown int64 // lines shown
	total int64 // lines in the file
	cut   int   // lines cut at MaxLineBytes
}

// readPage reads the page of f that starts at line offset (1-based;
// negative counts from the end; 0 means 1) with at most limit lines and
// ReadMaxBytes bytes (the first line is always shown). It scans the whole file to count its lines, holding
// only the read buffer and the page in memory.
func (w *Workspace) readPage(ctx context.Context, f io.ReadSeeker, offset, limit int64, pathLen int) (*page, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	lr := newLineReader(ctx, f)
	start := max(offset, 1)
	if offset < 0 {
		total, err := lr.count()
		if err != nil {
			return nil, err
		}
		start = max(1, total+offset+1)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		lr = newLineReader(ctx, f)
	}
	if err := lr.skip(start - 1); err != nil {
		return nil, err
	}
	p := &page{start: start}
	if lr.n < start-1 {
		p.total = lr.n
		return p, nil
	}
	// The closing line names the file, so its length is reserved too.
	budget := w.opts.ReadMaxBytes - footerReserve - pathLen
	maxLine := w.opts.MaxLineBytes
	var (
		b   strings.Builder
		buf = make([]byte, 0, maxLine)
		num = make([]byte, 0, 32)
	)
	for p.shown < limit {
		line, length, ok, err := lr.next(buf, true, maxLine)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		text := validText(line)
		marker := ""
		if length > int64(len(line)) || len(text) > maxLine {
			text = string(cutUTF8([]byte(text), maxLine))
			marker = fmt.Sprintf(" … [line cut: %d of %d bytes shown]", len(text), length)
		}
		num = strconv.AppendInt(num[:0], lr.n, 10)
		need := max(6, len(num)) + 1 + len(text) + len(marker) + 1
		if p.shown > 0 && b.Len()+need > budget {
			// This line is left for the next page; it is counted below.
			break
		}
		for i := len(num); i < 6; i++ {
			b.WriteByte(' ')
		}
		b.Write(num)
		b.WriteByte('\t')
		b.WriteString(text)
		b.WriteString(marker)
		b.WriteByte('\n')
		if marker != "" {
			p.cut++
		}
		p.shown++
	}
	total, err := lr.count()
	if err != nil {
		return nil, err
	}
	p.total, p.text = total, b.String()
	return p, nil
}

package workspace

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
)

const (
	// editCandidates is how many near matches a failed edit shows.
	editCandidates = 3
	// editShowLines bounds the lines shown per candidate and of the edited
	// region.
	editShowLines = 30
	// editContext is how many unchanged lines are shown around an edit.
	editContext = 3
	// maxListedOccurrences bounds the line numbers listed when old_string
	// is not unique.
	maxListedOccurrences = 20
)

func (w *Workspace) editSpec() harness.ToolSpec {
	return harness.ToolSpec{
		Name: "edit_file",
		Description: fmt.Sprintf("Edit a text file in the workspace by exact string replacement. "+
			"Arguments: path; old_string (text to find, copied exactly from the file including indentation, without read_file's line-number prefixes); "+
			"new_string (its replacement); replace_all (replace every occurrence instead of requiring exactly one). "+
			"Fails without changing anything when old_string is not found (the closest passages are shown with their line numbers) "+
			"or occurs more than once without replace_all (their line numbers are listed; add surrounding lines to make it unique). "+
			"Returns the edited region with line numbers. Limits: files up to %d bytes; binary files, .git/ and .harness/ are refused.",
			w.opts.MaxEditBytes),
		InputSchema: objectSchema([]string{"path", "old_string", "new_string"},
			stringField("path", "File to edit, relative to the workspace root."),
			stringField("old_string", "Exact text to replace; must occur exactly once unless replace_all is true."),
			stringField("new_string", "Replacement text; must differ from old_string (may be empty to delete)."),
			boolField("replace_all", "Replace every occurrence of old_string (default false)."),
		),
		Risk: harness.Destructive,
	}
}

type editArgs struct {
	Path       string  `json:"path"`
	OldString  string  `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

// lineNumberPrefix recognises read_file's "   12\t" prefix pasted into an
// old_string.
var lineNumberPrefix = regexp.MustCompile(`^ *[0-9]+\t`)

func (w *Workspace) editFile(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "edit_file"
	var a editArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if why := a.invalid(); why != "" {
		return failf(tool, "%s", why), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ed, fail := w.readEditable(tool, a.Path)
	if fail != nil {
		return fail, nil
	}
	old, repl, count := matchOld(ed.content, a.OldString, *a.NewString)
	switch {
	case count == 0:
		res := failf(tool, "%s", notFoundMessage(ed.show, ed.content, old))
		res.Meta = map[string]any{"path": ed.show, "replacements": 0}
		return res, nil
	case count > 1 && !a.ReplaceAll:
		res := failf(tool, "old_string occurs %d times in %s (at lines %s); include more surrounding lines so it matches once, or set replace_all to change every one",
			count, ed.show, occurrenceLines(ed.content, old))
		res.Meta = map[string]any{"path": ed.show, "replacements": 0}
		return res, nil
	}
	first := strings.Index(ed.content, old)
	firstLine := strings.Count(ed.content[:first], "\n") + 1
	n := 1
	if a.ReplaceAll {
		n = -1
	}
	updated := strings.Replace(ed.content, old, repl, n)
	if err := w.replaceFile(ed.rel, []byte(updated), ed.perm, true); err != nil {
		return failf(tool, "writing %s: %v", ed.show, err), nil
	}
	return editReport(ed.show, updated, repl, count, firstLine), nil
}

// invalid says what is wrong with the arguments of an edit, or "".
func (a *editArgs) invalid() string {
	switch {
	case a.Path == "":
		return "path is required"
	case a.OldString == "":
		return "old_string is empty; to create a file or replace all of it use write_file"
	case a.NewString == nil:
		return "new_string is required (send \"\" to delete old_string)"
	case *a.NewString == a.OldString:
		return "new_string is the same as old_string; nothing to change"
	}
	return ""
}

// editable is a text file read whole for an edit.
type editable struct {
	rel, show string
	content   string
	perm      fs.FileMode
}

// readEditable reads the file at path for an edit, or returns the failed
// result that says why it cannot be edited (missing, too big, binary, not
// a regular file, outside the workspace).
func (w *Workspace) readEditable(tool, path string) (*editable, *harness.ToolResult) {
	rel, fi, err := w.resolve(path, true)
	if err != nil {
		return nil, failf(tool, "%v", err)
	}
	show := slashRel(rel)
	if fi == nil {
		return nil, failf(tool, "%s does not exist; use write_file to create it", show)
	}
	if fi.Size() > int64(w.opts.MaxEditBytes) {
		return nil, failf(tool, "%s has %d bytes, more than the %d edit_file handles; use write_file or the shell", show, fi.Size(), w.opts.MaxEditBytes)
	}
	f, info, err := w.openRegular(show, rel)
	if err != nil {
		return nil, failf(tool, "%v", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(w.opts.MaxEditBytes)+1))
	f.Close()
	if err != nil {
		return nil, failf(tool, "reading %s: %v", show, unwrapPathError(err))
	}
	if len(data) > w.opts.MaxEditBytes {
		return nil, failf(tool, "%s grew past %d bytes while being read; try again", show, w.opts.MaxEditBytes)
	}
	if why := binaryReason(data[:min(len(data), sniffBytes)]); why != "" {
		return nil, failf(tool, "%s is a binary file (%s); edit_file edits text only", show, why)
	}
	return &editable{rel: rel, show: show, content: string(data), perm: info.Mode().Perm()}, nil
}

// matchOld counts old in content. When it is missing only because the
// file has Windows line endings that read_file does not show, old and repl
// are returned with CRLF endings and their count.
func matchOld(content, old, repl string) (string, string, int) {
	count := strings.Count(content, old)
	if count == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		crlfOld := strings.ReplaceAll(old, "\n", "\r\n")
		if n := strings.Count(content, crlfOld); n > 0 {
			return crlfOld, strings.ReplaceAll(repl, "\n", "\r\n"), n
		}
	}
	return old, repl, count
}

// editReport is the result of a successful edit: what changed and the
// first edited region with a little context, numbered like read_file, so
// the model can check the result without reading again.
func editReport(show, updated, repl string, count, firstLine int) *harness.ToolResult {
	total := countLines([]byte(updated))
	var b strings.Builder
	fmt.Fprintf(&b, "edited %s: replaced %s", show, plural(int64(count), "occurrence", "occurrences"))
	if count == 1 {
		fmt.Fprintf(&b, " at line %d", firstLine)
	} else {
		fmt.Fprintf(&b, ", the first at line %d", firstLine)
	}
	fmt.Fprintf(&b, "; the file now has %s.\n", plural(total, "line", "lines"))
	lines := strings.Split(strings.TrimSuffix(updated, "\n"), "\n")
	from := max(1, firstLine-editContext)
	to := min(len(lines), firstLine+strings.Count(repl, "\n")+editContext)
	if to-from+1 > editShowLines {
		writeNumbered(&b, lines, from, from+editShowLines-1)
		fmt.Fprintf(&b, "[… %d more edited lines not shown; read_file shows them]\n", to-from+1-editShowLines)
	} else {
		writeNumbered(&b, lines, from, to)
	}
	res := harness.TextResult(strings.TrimSuffix(b.String(), "\n"))
	res.Meta = map[string]any{"path": show, "replacements": count, "first_line": firstLine, "total_lines": int(total)}
	return res
}

// notFoundMessage explains a missing old_string and shows the passages of
// the file closest to it.
func notFoundMessage(show, content, old string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "old_string was not found in %s; nothing was changed.", show)
	oldLines := strings.Split(old, "\n")
	if lineNumberPrefix.MatchString(oldLines[0]) {
		b.WriteString(" It starts with a line number and a tab, as read_file shows them: copy the text after the tab only.")
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	cands, ok := nearest(lines, old, editCandidates)
	switch {
	case !ok:
		b.WriteString(" The file is too large to look for similar text; use grep to find the exact text.")
	case len(cands) == 0:
		b.WriteString(" No similar text was found either; read the file again (read_file) and copy the text exactly.")
	default:
		for i, c := range cands {
			if c.whitespace {
				fmt.Fprintf(&b, "\nLines %d-%d match except for white space (indentation, tabs or spaces):\n", c.first, c.last)
			} else {
				if i == 0 {
					b.WriteString("\nThe closest passages:")
				}
				fmt.Fprintf(&b, "\nLines %d-%d (%.0f%% similar):\n", c.first, c.last, c.score*100)
			}
			writeNumbered(&b, lines, c.first, min(c.last, c.first+editShowLines-1))
		}
		b.WriteString("Copy the exact text from the file into old_string and call edit_file again.")
	}
	return b.String()
}

// occurrenceLines lists the line numbers where old starts.
func occurrenceLines(content, old string) string {
	var nums []string
	line, pos := 1, 0
	for len(nums) < maxListedOccurrences {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		nums = append(nums, strconv.Itoa(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	s := strings.Join(nums, ", ")
	if strings.Count(content[pos:], old) > 0 {
		s += ", …"
	}
	return s
}

// writeNumbered writes lines[from-1:to] (1-based, inclusive) with
// read_file's numbering, each line cut to defaultMaxLineBytes.
func writeNumbered(b *strings.Builder, lines []string, from, to int) {
	for i := from; i <= to && i <= len(lines); i++ {
		l := lines[i-1]
		if len(l) > defaultMaxLineBytes {
			l = string(cutUTF8([]byte(l), defaultMaxLineBytes)) + " …"
		}
		fmt.Fprintf(b, "%6d\t%s\n", i, validText([]byte(l)))
	}
}

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
)

const (
	defaultGrepMatches = 100
	maxGrepMatches     = 1000
	maxGrepContext     = 10
	// maxGrepLine is how much of one line is searched; the rest of a longer
	// line (a minified bundle) is skipped.
	maxGrepLine = 1 << 20
	// grepShowBytes is how much of a matching line is shown, as a window
	// around the first match.
	grepShowBytes = 400
)

func (w *Workspace) grepSpec() harness.ToolSpec {
	return harness.ToolSpec{
		Name: "grep",
		Description: fmt.Sprintf("Search file contents in the workspace with a regular expression (RE2 syntax, as in Go and ripgrep: no backreferences or lookaround). "+
			"Arguments: pattern (the regular expression); path (file or folder to search, default the workspace root); "+
			"glob (only files whose name matches, e.g. \"*.go\"; with a / it matches the path below path, e.g. \"src/**/*.ts\"); "+
			"ignore_case; context (lines before and after each match, 0-%d); max_matches (default %d, at most %d). "+
			"Returns path:line:text for matches and path-line-text for context lines, like grep -n, and a closing line counting matches and files. "+
			"Skips .git and .harness (unless path is inside them), binary files and symbolic links. "+
			"Limits: each shown line is cut to about %d bytes around the match; output at most %d bytes.",
			maxGrepContext, defaultGrepMatches, maxGrepMatches, grepShowBytes, w.opts.MaxOutputBytes),
		InputSchema: objectSchema([]string{"pattern"},
			stringField("pattern", "Regular expression (RE2), for example \"func \\\\w+Handler\" or \"TODO|FIXME\"."),
			stringField("path", "File or folder to search, relative to the workspace root (default \".\")."),
			stringField("glob", "Only search files matching this pattern: \"*.go\" matches file names at any depth, \"pkg/**/*.go\" matches paths."),
			boolField("ignore_case", "Match letters case-insensitively (default false)."),
			intField("context", "Lines of context to show before and after each match (default 0).", 0, maxGrepContext),
			intField("max_matches", fmt.Sprintf("Stop after this many matching lines (default %d).", defaultGrepMatches), 1, maxGrepMatches),
		),
		Risk: harness.ReadOnly,
	}
}

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
	Context    int    `json:"context"`
	MaxMatches int    `json:"max_matches"`
}

// grepRun is the state of one search.
type grepRun struct {
	w        *Workspace
	re       *regexp.Regexp
	context  int
	maxMatch int
	maxOut   int

	out      strings.Builder
	matches  int  // matching lines shown
	more     bool // a match beyond max_matches exists
	full     bool // the output budget is used up
	files    int  // files with a match
	searched int
	binary   int
	buf      []byte
	lastFile string // file of the last group written, for "--" separators
	lastLine int64
}

func (w *Workspace) grep(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "grep"
	var a grepArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	re, filter, why := a.compile()
	if why != "" {
		return failf(tool, "%s", why), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	rel, fi, err := w.resolve(a.Path, false)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	base := slashRel(rel)
	g := &grepRun{w: w, re: re, context: a.Context, maxMatch: a.MaxMatches, maxOut: w.opts.MaxOutputBytes - footerReserve}
	if !fi.IsDir() {
		err = g.file(ctx, base)
	} else {
		err = g.walk(ctx, base, filter, strings.Contains(a.Glob, "/"), protectedPart(rel) != "")
	}
	if err != nil && !errors.Is(err, errStopWalk) {
		return g.fail(ctx, tool, base, err)
	}
	return g.result(a.Pattern, base), nil
}

// compile checks the arguments (defaulting max_matches) and compiles the
// pattern and the glob filter (nil when there is none), or says what is
// wrong with them.
func (a *grepArgs) compile() (*regexp.Regexp, *globMatcher, string) {
	switch {
	case a.Pattern == "":
		return nil, nil, "pattern is required"
	case a.Context < 0 || a.Context > maxGrepContext:
		return nil, nil, fmt.Sprintf("context must be between 0 and %d, got %d", maxGrepContext, a.Context)
	case a.MaxMatches < 0 || a.MaxMatches > maxGrepMatches:
		return nil, nil, fmt.Sprintf("max_matches must be between 1 and %d, got %d", maxGrepMatches, a.MaxMatches)
	}
	if a.MaxMatches == 0 {
		a.MaxMatches = defaultGrepMatches
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, nil, fmt.Sprintf("pattern %q is not a valid RE2 regular expression: %v", a.Pattern, err)
	}
	var filter *globMatcher
	if a.Glob != "" {
		if filter, err = compileGlob(a.Glob); err != nil {
			return nil, nil, fmt.Sprintf("glob: %v", err)
		}
	}
	return re, filter, ""
}

// walk searches the regular files under base that filter (when set)
// matches, by name or, when byPath, by path below base, until the match
// or output bound is reached (errStopWalk). Protected folders are skipped
// unless the walk starts inside one.
func (g *grepRun) walk(ctx context.Context, base string, filter *globMatcher, byPath, insideProtected bool) error {
	return fs.WalkDir(g.w.root.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			return nil // unreadable folder: skip it
		}
		if d.IsDir() {
			if p != base && !insideProtected && isProtectedDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symbolic links, FIFOs, devices
		}
		if filter != nil {
			name := d.Name()
			if byPath {
				name = strings.TrimPrefix(p, base+"/")
				if base == "." {
					name = p
				}
			}
			if !filter.match(name) {
				return nil
			}
		}
		if err := g.file(ctx, p); err != nil {
			return err
		}
		if g.more || g.full {
			return errStopWalk
		}
		return nil
	})
}

func (g *grepRun) fail(ctx context.Context, tool, base string, err error) (*harness.ToolResult, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return failf(tool, "searching %s: %v", base, unwrapPathError(err)), nil
}

// file searches one file; p is its canonical slash path.
func (g *grepRun) file(ctx context.Context, p string) error {
	f, _, err := g.w.openRegular(p, p)
	if err != nil {
		if errors.Is(err, errSpecialFile) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, errHardLink) {
			return nil // replaced or removed during the walk, or refused like read_file refuses it
		}
		return err
	}
	defer f.Close()
	g.searched++
	sample := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, sample)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil // unreadable file: skip it
	}
	if binaryReason(sample[:n]) != "" {
		g.binary++
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	lr := newLineReader(ctx, f)
	var (
		before    []ctxLine // ring of the last `context` lines
		after     int       // context lines still to print after a match
		fileMatch bool
	)
	for {
		line, _, ok, err := lr.next(g.buf, true, maxGrepLine)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		g.buf = line
		num := lr.n
		loc := g.re.FindIndex(line)
		if loc == nil {
			if after > 0 {
				g.write(p, num, '-', line, nil)
				after--
			} else if g.context > 0 {
				if len(before) == g.context {
					before = before[1:]
				}
				before = append(before, ctxLine{num, showLine(line, nil)})
			}
			continue
		}
		if g.matches >= g.maxMatch {
			g.more = true
			return nil
		}
		if !fileMatch {
			fileMatch = true
			g.files++
		}
		for _, c := range before {
			g.writeShown(p, c.num, '-', c.text)
		}
		before = before[:0]
		g.write(p, num, ':', line, loc)
		g.matches++
		after = g.context
		if g.full {
			return nil
		}
	}
}

type ctxLine struct {
	num  int64
	text string
}

func (g *grepRun) write(p string, num int64, sep byte, line []byte, loc []int) {
	g.writeShown(p, num, sep, showLine(line, loc))
}

func (g *grepRun) writeShown(p string, num int64, sep byte, text string) {
	if g.full {
		return
	}
	var b strings.Builder
	if g.context > 0 && g.lastFile != "" && (g.lastFile != p || num > g.lastLine+1) {
		b.WriteString("--\n")
	}
	b.WriteString(validText([]byte(p)))
	b.WriteByte(sep)
	b.WriteString(strconv.FormatInt(num, 10))
	b.WriteByte(sep)
	b.WriteString(text)
	b.WriteByte('\n')
	if g.out.Len()+b.Len() > g.maxOut {
		g.full = true
		return
	}
	g.out.WriteString(b.String())
	g.lastFile, g.lastLine = p, num
}

// showLine returns the part of line to show: all of it when short, else a
// window of about grepShowBytes around the first match, with "…" where it
// was cut.
func showLine(line []byte, loc []int) string {
	if len(line) <= grepShowBytes {
		return validText(line)
	}
	start := 0
	if loc != nil && loc[0] > grepShowBytes/4 {
		start = loc[0] - grepShowBytes/4
		for start < len(line) && start > 0 && line[start]&0xC0 == 0x80 {
			start++ // do not start inside a UTF-8 sequence
		}
	}
	shown := cutUTF8(line[start:], grepShowBytes)
	s := validText(shown)
	if start > 0 {
		s = "…" + s
	}
	if start+len(shown) < len(line) {
		s += fmt.Sprintf("… [%d-byte line]", len(line))
	}
	return s
}

func (g *grepRun) result(pattern, base string) *harness.ToolResult {
	var b strings.Builder
	b.WriteString(g.out.String())
	where := base
	if where == "." {
		where = "the workspace"
	}
	if g.matches == 0 {
		fmt.Fprintf(&b, "[no matches for /%s/ in %s (%s searched", pattern, where, plural(int64(g.searched), "file", "files"))
	} else {
		fmt.Fprintf(&b, "[%s in %s", plural(int64(g.matches), "matching line", "matching lines"), plural(int64(g.files), "file", "files"))
		switch {
		case g.more:
			fmt.Fprintf(&b, "; stopped at max_matches=%d and more matches exist — narrow pattern, path or glob", g.maxMatch)
		case g.full:
			fmt.Fprintf(&b, "; output stopped at %d bytes — narrow pattern, path or glob", g.maxOut)
		}
	}
	if g.binary > 0 {
		fmt.Fprintf(&b, "; %s skipped", plural(int64(g.binary), "binary file", "binary files"))
	}
	if g.matches == 0 {
		b.WriteString(")")
	}
	b.WriteString("]")
	return &harness.ToolResult{
		Parts: []harness.Part{harness.TextPart(b.String())},
		Meta:  map[string]any{"path": base, "matches": g.matches, "files": g.files, "searched": g.searched, "more": g.more},
	}
}

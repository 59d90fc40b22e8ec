package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentharness/harness"
)

const (
	defaultGlobResults = 200
	maxGlobResults     = 2000
)

func (w *Workspace) globSpec() harness.ToolSpec {
	return harness.ToolSpec{
		Name: "glob",
		Description: fmt.Sprintf("Find files and folders in the workspace by name pattern. "+
			"Arguments: pattern (shell syntax relative to path: * and ? within one path segment, [abc], {go,mod} alternatives, ** for any number of folders — "+
			"\"*.go\" matches only directly in path, \"**/*.go\" at any depth, \"src/**/test_*.py\" under src); "+
			"path (folder to search from, default the workspace root); max_results (default %d, at most %d). "+
			"Returns workspace-relative paths, one per line in walk order, folders with a trailing /, and a closing line with the number of matches. "+
			"Skips .git and .harness unless path is inside them; does not follow symbolic links to folders. Limits: at most %d bytes of output.",
			defaultGlobResults, maxGlobResults, w.opts.MaxOutputBytes),
		InputSchema: objectSchema([]string{"pattern"},
			stringField("pattern", "Glob pattern, for example \"**/*.go\", \"cmd/*/main.go\" or \"**/*.{ts,tsx}\"."),
			stringField("path", "Folder to search from, relative to the workspace root (default \".\")."),
			intField("max_results", fmt.Sprintf("Maximum number of paths to return (default %d).", defaultGlobResults), 1, maxGlobResults),
		),
		Risk: harness.ReadOnly,
	}
}

type globArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	MaxResults int    `json:"max_results"`
}

// errStopWalk ends a walk early; it never reaches the model.
var errStopWalk = errors.New("stop walk")

func (w *Workspace) glob(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
	const tool = "glob"
	var a globArgs
	if err := decodeArgs(call, &a); err != nil {
		return failf(tool, "%v", err), nil
	}
	if a.MaxResults < 0 || a.MaxResults > maxGlobResults {
		return failf(tool, "max_results must be between 1 and %d, got %d", maxGlobResults, a.MaxResults), nil
	}
	if a.MaxResults == 0 {
		a.MaxResults = defaultGlobResults
	}
	pattern, why := w.globPattern(&a)
	if why != "" {
		return failf(tool, "%s", why), nil
	}
	prefix, rest := staticPrefix(pattern)
	m, err := compileGlob(rest)
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	baseRel, fi, err := w.resolve(filepath.Join(a.Path, filepath.FromSlash(prefix)), false)
	if errors.Is(err, fs.ErrNotExist) {
		return w.globResult(pattern, nil, 0), nil
	}
	if err != nil {
		return failf(tool, "%v", err), nil
	}
	base := slashRel(baseRel)
	if !fi.IsDir() {
		// The whole pattern was literal but for its last segment, and the
		// prefix names a file: nothing can be below it.
		return w.globResult(pattern, nil, 0), nil
	}
	found, total, err := w.walkGlob(ctx, base, m, protectedPart(baseRel) != "", a.MaxResults)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failf(tool, "searching %s: %v", base, unwrapPathError(err)), nil
	}
	return w.globResult(pattern, found, total), nil
}

// globPattern returns the call's pattern in slash form, relative to
// a.Path (which it defaults to "."), or why it cannot be used.
func (w *Workspace) globPattern(a *globArgs) (pattern, why string) {
	if a.Path == "" {
		a.Path = "."
	}
	pattern = filepath.ToSlash(a.Pattern)
	if path.IsAbs(pattern) {
		// An absolute pattern inside the workspace is taken relative to
		// the root: models often echo the full path they were shown.
		prefix, rest := staticPrefix(pattern)
		r, ok := w.within(filepath.Clean(filepath.FromSlash(prefix)))
		if !ok {
			return "", fmt.Sprintf("pattern %s is %v %s", a.Pattern, errOutside, w.dir)
		}
		pattern = path.Join(filepath.ToSlash(r), rest)
		a.Path = "."
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == ".." {
			return "", fmt.Sprintf("pattern %s uses \"..\"; patterns match inside path only — set path instead", a.Pattern)
		}
	}
	return pattern, ""
}

// walkGlob walks base for paths matching m: the first limit of them (and
// no more than the output bound holds), and how many matched in all.
// Protected folders are skipped unless the walk starts inside one.
func (w *Workspace) walkGlob(ctx context.Context, base string, m *globMatcher, insideProtected bool, limit int) (found []string, total int, err error) {
	bytes := 0
	err = fs.WalkDir(w.root.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == base {
			return nil // the root of the walk; a failure to read it surfaces below
		}
		under := strings.TrimPrefix(p, base+"/")
		if base == "." {
			under = p
		}
		depth := strings.Count(under, "/") + 1
		if err != nil {
			return nil // unreadable folder: skip it, keep walking
		}
		if d.IsDir() && !insideProtected && isProtectedDir(d.Name()) {
			return fs.SkipDir
		}
		if m.match(under) {
			total++
			if len(found) < limit && bytes < w.opts.MaxOutputBytes-footerReserve {
				s := p
				if d.IsDir() {
					s += "/"
				}
				found = append(found, s)
				bytes += len(s) + 1
			}
		}
		if d.IsDir() && !m.mayDescend(depth) {
			return fs.SkipDir
		}
		return nil
	})
	return found, total, err
}

func (w *Workspace) globResult(pattern string, found []string, total int) *harness.ToolResult {
	var b strings.Builder
	for _, f := range found {
		b.WriteString(validText([]byte(f)))
		b.WriteByte('\n')
	}
	switch {
	case total == 0:
		fmt.Fprintf(&b, "[no matches for %s]", pattern)
	case len(found) < total:
		fmt.Fprintf(&b, "[%d of %d matches for %s shown — narrow the pattern or raise max_results (at most %d)]", len(found), total, pattern, maxGlobResults)
	default:
		fmt.Fprintf(&b, "[%s for %s]", plural(int64(total), "match", "matches"), pattern)
	}
	return &harness.ToolResult{
		Parts: []harness.Part{harness.TextPart(b.String())},
		Meta:  map[string]any{"matches": total, "shown": len(found)},
	}
}

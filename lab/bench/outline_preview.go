package benchlab

import (
	"bytes"
	"context"
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/shellcmd"
)

// outlineWhy is what the marker says the outline's lines were picked for.
const outlineWhy = "they declare the file's functions, types and names (its outline)"

// Bounds of an outline preview.
const (
	// defaultOutlineSize is the preview's bytes when outlinePreview.size
	// is 0: guard.Relevant's 4 KiB.
	defaultOutlineSize = 4 << 10
	// minOutlineDecls is the fewest declarations worth an outline: a
	// file with fewer gets guard.Relevant's preview.
	minOutlineDecls = 3
	// minCodeDecls and codeDeclShare say when a result that no call
	// names as a file read is source code by its content: at least
	// minCodeDecls declaring lines, and one non-blank line in
	// codeDeclShare.
	minCodeDecls  = 8
	codeDeclShare = 20
	// maxOutlineText bounds the text an outline is looked for in (the
	// guard asks a ContextPreview about at most 4 MiB).
	maxOutlineText = 4 << 20
)

// outlinePreview is a guard.ContextPreview that spends a spilled source
// file's preview on its outline: the lines that declare something (see
// outline) and, when asked, its imports (importLines), in the order of
// declLine.rank, each rank in text order. The guard shows them in text order with a line for each gap
// naming the lines left out ("… (lines 41-111 not shown)"), which are the
// spill file's lines, so the agent knows where to page. Before the
// outline it keeps head bytes of the file's start and tail bytes of its
// end; what the outline leaves unused extends the head. A result is source
// when its call reads a file with a code extension (a file reader's path,
// or a shell's cat, sed, nl, head, tail or awk of one) or when its content
// declares enough (minCodeDecls, one line in codeDeclShare); any other
// result, or a file with fewer than minOutlineDecls declarations, gets
// guard.Relevant's preview.
type outlinePreview struct {
	// head and tail are the bytes kept of the start and the end before
	// the outline is chosen.
	head, tail int
	// size is the preview's bytes (0: defaultOutlineSize); the whole
	// budget when nothing beyond the preview can be read back.
	size int
	// relevant, when > 0, spends that many bytes first on guard.Relevant's
	// excerpt (its head, tail and the lines matching the call, the
	// agent's message and the task, its shares scaled to fit), and the
	// rest of size on the outline; head and tail are then unused.
	relevant int
	// imports adds the file's import statements to the outline, after
	// its top-level declarations (see declLine.rank).
	imports bool
}

// outlineRelevantWhy is the marker's reason when guard.Relevant's lines
// come first.
const outlineRelevantWhy = "they contain words of your call, your previous message or the task, or declare the file's functions, types and names"

// Split implements guard.Preview: a streamed result, whose middle is no
// longer at hand, gets guard.Relevant's head and tail.
func (p outlinePreview) Split(w guard.Window, budget int) (head, tail int) {
	return guard.Relevant{}.Split(w, budget)
}

// Excerpt implements guard.ContextPreview.
func (p outlinePreview) Excerpt(ctx context.Context, call *harness.ToolCall, w guard.Window, budget int) (guard.Excerpt, bool) {
	text := w.Head
	if budget <= 0 || int64(len(text)) != w.Total || len(text) > maxOutlineText {
		return guard.Relevant{}.Excerpt(ctx, call, w, budget)
	}
	decls := outline(text)
	if len(decls) < minOutlineDecls || !sourceCall(call) && !looksLikeSource(text, len(decls)) {
		return guard.Relevant{}.Excerpt(ctx, call, w, budget)
	}
	size := p.size
	if size <= 0 {
		size = defaultOutlineSize
	}
	if w.Fill || size > budget {
		size = budget
	}
	if p.imports {
		decls = append(slices.Clone(decls), importLines(text)...)
		slices.SortStableFunc(decls, func(a, b declLine) int { return a.start - b.start })
	}
	if p.relevant > 0 {
		rs := min(p.relevant, size)
		if ex, ok := (guard.Relevant{}).Excerpt(ctx, call, w, rs); ok {
			spans := append(ex.Spans, outlineSpans(text, decls, 0, 0, size-rs)...)
			return guard.Excerpt{Spans: spans, Size: size, Why: outlineRelevantWhy}, true
		}
		// Nothing matches: Relevant's head and tail, then the outline.
		h := min(p.relevant*3/4, size)
		return guard.Excerpt{Spans: outlineSpans(text, decls, h, min(p.relevant-h, size-h), size), Size: size, Why: outlineWhy}, true
	}
	return guard.Excerpt{Spans: outlineSpans(text, decls, p.head, p.tail, size), Size: size, Why: outlineWhy}, true
}

// outlineSpans proposes, most important first: the head (whole lines
// within head bytes), the tail (whole lines within tail bytes), each
// declaration in the order of declLine.rank, each rank in text order,
// then the lines after the head, one span each, while what was proposed
// is under size. The guard keeps each span that still fits.
func outlineSpans(text []byte, decls []declLine, head, tail, size int) []guard.Span {
	var spans []guard.Span
	headEnd := 0
	if head > 0 {
		headEnd = bytes.LastIndexByte(text[:min(head, len(text))], '\n') + 1
		if headEnd > 0 {
			spans = append(spans, guard.Span{Start: 0, End: headEnd})
		}
	}
	if tail > 0 && len(text)-tail > headEnd {
		from := len(text) - tail
		if i := bytes.IndexByte(text[from:], '\n'); i >= 0 && from+i+1 < len(text) {
			spans = append(spans, guard.Span{Start: from + i + 1, End: len(text)})
		}
	}
	ranked := slices.Clone(decls)
	slices.SortStableFunc(ranked, func(a, b declLine) int {
		ac, ai := a.rank()
		bc, bi := b.rank()
		if ac != bc {
			return ac - bc
		}
		return ai - bi
	})
	proposed := headEnd
	// gapLine is about what a gap line costs ("… (lines 41-111 not
	// shown, 5120 bytes)\n"): enough to stop proposing head lines once
	// the outline has filled the budget.
	const gapLine = 48
	for _, d := range ranked {
		if d.start < headEnd {
			continue
		}
		spans = append(spans, guard.Span{Start: d.start, End: d.end, Reasons: []string{"declarations"}})
		proposed += d.end - d.start + gapLine
	}
	for p := headEnd; p < len(text) && proposed < size; {
		e := nextLine(text, p)
		spans = append(spans, guard.Span{Start: p, End: e})
		proposed += e - p
		p = e
	}
	return spans
}

// looksLikeSource reports whether text, which declares decls things, reads
// as source code by its content: at least minCodeDecls declarations, and
// one in codeDeclShare of its non-blank lines.
func looksLikeSource(text []byte, decls int) bool {
	if decls < minCodeDecls {
		return false
	}
	lines := 0
	for l := range bytes.Lines(text) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines++
		}
	}
	return decls*codeDeclShare >= lines
}

// filePrinters are the shell programs that print a file the agent asked
// to read.
var filePrinters = map[string]bool{"cat": true, "sed": true, "nl": true, "head": true, "tail": true, "awk": true, "bat": true, "less": true, "more": true}

// pathKeys are the argument names file readers give the file they read.
var pathKeys = []string{"file_path", "path", "filePath", "absolute_path", "filename", "file", "target_file"}

// sourceCall reports whether call reads a source file: a shell command
// line with a file printer (filePrinters) and a word naming a file with a
// code extension, or a file reader (a tool whose name says read, view,
// open or cat, or whose "command" is "view") whose path has one.
func sourceCall(call *harness.ToolCall) bool {
	if call == nil {
		return false
	}
	var args map[string]any
	if json.Unmarshal(call.Args, &args) != nil {
		return false
	}
	if shellcmd.IsShell(call.Name) {
		return printsSourceFile(commandLine(args))
	}
	name := strings.ToLower(call.Name)
	reader := args["command"] == "view"
	for _, k := range []string{"read", "view", "open", "cat"} {
		reader = reader || strings.Contains(name, k)
	}
	if !reader {
		return false
	}
	for _, k := range pathKeys {
		if s, ok := args[k].(string); ok && isCodePath(s) {
			return true
		}
	}
	return false
}

// commandLine is a shell call's command line: its "command" (or "cmd")
// string, or the script of an argv such as ["bash", "-lc", "…"].
func commandLine(args map[string]any) string {
	v, ok := args["command"]
	if !ok {
		v = args["cmd"]
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var words []string
		for i, w := range x {
			s, _ := w.(string)
			if (s == "-c" || s == "-lc") && i+1 < len(x) {
				script, _ := x[i+1].(string)
				return script
			}
			words = append(words, s)
		}
		return strings.Join(words, " ")
	}
	return ""
}

// printsSourceFile reports whether a command line has a simple command
// (split at |, ;, & and line breaks) whose program is a file printer and
// one of whose words names a source file.
func printsSourceFile(script string) bool {
	for _, seg := range strings.FieldsFunc(script, func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' }) {
		f := strings.Fields(seg)
		if len(f) == 0 || !filePrinters[path.Base(strings.Trim(f[0], `"'(`))] {
			continue
		}
		if slices.ContainsFunc(f[1:], isCodePath) {
			return true
		}
	}
	return false
}

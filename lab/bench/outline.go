package benchlab

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file finds a source file's outline: the lines that declare
// something (a function, a method, a type, a class, a constant), which an
// agent goes on to quote from a file it read. outlinePreview spends a
// spilled file's preview on them.

// declLine is a line of text that declares something.
type declLine struct {
	// start and end bound the line in the text, its line break included.
	start, end int
	// indent is the width of the line's leading white space past any
	// line-number prefix (a tab counts 4): 0 for a top-level declaration.
	indent int
	// local is an indented const, let, var or val: most often a
	// variable inside a function body rather than a member.
	local bool
	// imp is an import statement (see importLines), its whole block.
	imp bool
}

// rank orders declarations for a preview: top-level ones first, then
// imports, then members by indentation, then the variables of function
// bodies.
func (d declLine) rank() (class, indent int) {
	switch {
	case d.local:
		return 3, d.indent
	case d.imp:
		return 1, 0
	case d.indent == 0:
		return 0, 0
	}
	return 2, d.indent
}

// maxImportLines bounds the lines one import statement spans.
const maxImportLines = 40

// importLines returns the import statements of text that start a line
// (import, from … import, use, using, #include, require), in text order;
// a statement whose first line ends with "{" or "(" spans to the line that
// closes it (at most maxImportLines lines).
func importLines(text []byte) []declLine {
	var out []declLine
	for p := 0; p < len(text); {
		e := nextLine(text, p)
		_, rest := leadingSpace(skipLineNumber(bytes.TrimRight(text[p:e], "\r\n")))
		w, _ := firstWord(string(rest))
		if w == "import" || w == "from" && bytes.Contains(rest, []byte(" import")) || w == "use" || w == "using" ||
			w == "require" || bytes.HasPrefix(rest, []byte("#include")) {
			end := e
			if open := bytes.TrimRight(rest, " \t"); bytes.HasSuffix(open, []byte("{")) || bytes.HasSuffix(open, []byte("(")) {
				for n := 0; n < maxImportLines && end < len(text); n++ {
					next := nextLine(text, end)
					closes := bytes.ContainsAny(text[end:next], "})")
					end = next
					if closes {
						break
					}
				}
			}
			out = append(out, declLine{start: p, end: end, imp: true})
			e = end
		}
		p = e
	}
	return out
}

// nextLine is the start of the line after the one at p (len(text) for
// the last).
func nextLine(text []byte, p int) int {
	if i := bytes.IndexByte(text[p:], '\n'); i >= 0 {
		return p + i + 1
	}
	return len(text)
}

// maxDeclLine is the longest line taken as a declaration: a longer one is
// minified code or data, not a signature worth its bytes in a preview.
const maxDeclLine = 240

// outline returns the lines of text that declare something, in text
// order. A line-number prefix as file tools print them ("    12→" of
// Claude Code's Read, "    12\t" of nl and cat -n) is skipped before the
// line is read; so are comments, imports and lines over maxDeclLine bytes.
func outline(text []byte) []declLine {
	var out []declLine
	for p := 0; p < len(text); {
		e := nextLine(text, p)
		if e-p <= maxDeclLine {
			body := bytes.TrimRight(text[p:e], "\r\n")
			body = skipLineNumber(body)
			indent, rest := leadingSpace(body)
			if isDecl(string(rest)) {
				w, _ := firstWord(string(rest))
				local := indent > 0 && (w == "const" || w == "let" || w == "var" || w == "val")
				out = append(out, declLine{start: p, end: e, indent: indent, local: local})
			}
		}
		p = e
	}
	return out
}

// skipLineNumber drops the line number file tools put before each line:
// optional spaces, digits, then "→" or a tab. A line without one is
// returned as it is.
func skipLineNumber(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	d := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == d {
		return b
	}
	switch {
	case i < len(b) && b[i] == '\t':
		return b[i+1:]
	case bytes.HasPrefix(b[i:], []byte("→")):
		return b[i+len("→"):]
	}
	return b
}

// leadingSpace returns the width of b's leading white space (a tab counts
// 4) and the rest of b.
func leadingSpace(b []byte) (int, []byte) {
	w := 0
	for i, c := range b {
		switch c {
		case ' ':
			w++
		case '\t':
			w += 4
		default:
			return w, b[i:]
		}
	}
	return w, nil
}

// declKeywords start a declaration in one of the languages agents read
// most (Go, Python, JavaScript/TypeScript, Java/Kotlin/C#, Rust, Ruby,
// PHP, Swift, Elixir, C) when a space, a tab or "<" follows them.
var declKeywords = map[string]bool{
	"func": true, "def": true, "defp": true, "defmodule": true, "class": true, "type": true, "interface": true,
	"struct": true, "enum": true, "trait": true, "impl": true, "fn": true, "mod": true, "module": true,
	"function": true, "function*": true, "const": true, "let": true, "var": true, "val": true, "fun": true,
	"record": true, "namespace": true, "object": true, "protocol": true, "extension": true, "typedef": true,
	"union": true, "macro_rules!": true,
}

// declModifiers may come before a declaration's keyword or name.
var declModifiers = map[string]bool{
	"export": true, "default": true, "public": true, "private": true, "protected": true, "internal": true,
	"static": true, "final": true, "abstract": true, "async": true, "override": true, "readonly": true,
	"declare": true, "pub": true, "unsafe": true, "extern": true, "inline": true, "virtual": true,
	"sealed": true, "open": true, "data": true, "suspend": true, "synchronized": true, "native": true,
	"partial": true, "get": true, "set": true, "companion": true, "*": true,
}

// notDeclWords start a statement, never a declaration, even when a call's
// parentheses follow them.
var notDeclWords = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true, "new": true,
	"throw": true, "else": true, "do": true, "try": true, "await": true, "yield": true, "typeof": true,
	"delete": true, "case": true, "sizeof": true, "elif": true, "with": true, "assert": true, "print": true,
	"super": true, "this": true, "self": true, "go": true, "defer": true, "function": true, "import": true,
	"from": true, "require": true, "package": true, "using": true, "include": true, "not": true, "and": true,
	"or": true, "in": true, "echo": true, "raise": true, "when": true, "match": true, "select": true,
}

// isDecl reports whether a line, its indentation and line number taken
// off, declares something: a declaration keyword after any modifiers
// (`export async function f(`, `pub(crate) fn f`, `class A:`), an exported
// name (`export { a, b }`), a method or function signature (`name(args) {`,
// `public List<T> name(`), or a function bound to a name (`name = (x) =>`).
func isDecl(s string) bool {
	if s == "" || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/*") || strings.HasPrefix(s, "*") ||
		strings.HasPrefix(s, "#") || strings.HasPrefix(s, "--") || strings.HasPrefix(s, "@") {
		return false
	}
	exported, modified := false, false
	rest := s
	for {
		w, after := firstWord(rest)
		if w == "" {
			if modified && strings.HasPrefix(rest, "<") {
				return isSignature(rest, true) // a generic method: static <T> List<T> f(
			}
			return exported && strings.TrimSpace(rest) != ""
		}
		if w == "pub" && strings.HasPrefix(after, "(") { // pub(crate)
			if i := strings.IndexByte(after, ')'); i >= 0 {
				after = after[i+1:]
			}
		}
		if declModifiers[w] && (after == "" || after[0] == ' ' || after[0] == '\t' || w == "pub") {
			exported = exported || w == "export"
			modified = true
			rest = strings.TrimLeft(after, " \t")
			continue
		}
		if declKeywords[w] {
			return after != "" && (after[0] == ' ' || after[0] == '\t' || after[0] == '<')
		}
		if exported {
			return true // export default x, export { a, b }
		}
		if notDeclWords[w] {
			return false
		}
		return isSignature(rest, modified)
	}
}

// firstWord returns the identifier that starts s (letters, digits, _, $,
// and a trailing * or ! as in function* and macro_rules!) and what follows
// it; "" when s does not start with one (but a lone "*" is a word).
func firstWord(s string) (string, string) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !(r == '_' || r == '$' || unicode.IsLetter(r) || r >= '0' && r <= '9') {
			break
		}
		i += n
	}
	if i < len(s) && (s[i] == '*' || s[i] == '!') && (i > 0 || s[i] == '*') {
		i++
	}
	if i > 0 && s[0] >= '0' && s[0] <= '9' {
		return "", s
	}
	return s[:i], s[i:]
}

// isSignature reports whether s reads as a function or method signature
// or a function bound to a name: a name (after a type for typed
// languages) and parentheses whose contents hold no string and no arrow
// (so `it("works", () => {` is a call, not a declaration), the line
// ending with "{", or with ")" or "," after a modifier; `name = (…) =>`;
// or, after a modifier, a field (`private cacheKey: string`, `private
// final Map<K, V> cache;`).
func isSignature(s string, modified bool) bool {
	words := 0
	i := 0
	for i < len(s) {
		// A type's punctuation: generics, arrays, pointers, qualified names.
		for i < len(s) && strings.IndexByte("<>[]?*&., ", s[i]) >= 0 {
			if s[i] == '.' && words == 1 && i+1 < len(s) && s[i+1] != ' ' && !modified {
				return false // a call on a value: obj.method(
			}
			i++
		}
		w, after := firstWord(s[i:])
		if w == "" {
			break
		}
		words++
		i = len(s) - len(after)
	}
	if words == 0 || i >= len(s) {
		return false
	}
	trimmed := strings.TrimRight(s, " \t;")
	switch s[i] {
	case '(':
		if strings.ContainsAny(s[i:], `"'`+"`") || strings.Contains(s[i:], "=>") || strings.Contains(s[:i], "=") {
			return false
		}
		closeAt := strings.LastIndexByte(s, ')')
		if closeAt < i {
			return modified && (strings.HasSuffix(trimmed, ",") || strings.HasSuffix(trimmed, "("))
		}
		if strings.HasSuffix(trimmed, "{") {
			return true
		}
		return modified && (strings.HasSuffix(trimmed, ")") || strings.HasSuffix(trimmed, ",") || strings.Contains(s[closeAt:], "throws"))
	case '=', ':':
		if strings.HasPrefix(s[i:], "==") {
			return false
		}
		if modified {
			return true // a field: private readonly cacheKey: string
		}
		if words != 1 {
			return false
		}
		v := strings.TrimLeft(s[i+1:], " \t")
		v = strings.TrimPrefix(v, "async ")
		return strings.HasPrefix(v, "function") || (strings.HasPrefix(v, "(") || isIdentStart(v)) && strings.Contains(v, "=>")
	case ';':
		return modified && words >= 2 // a typed field: private final Map<K, V> cache;
	}
	return false
}

// isIdentStart reports whether s starts with a letter, _ or $.
func isIdentStart(s string) bool {
	w, _ := firstWord(s)
	return w != ""
}

// codeExtensions are the file name endings of source code.
var codeExtensions = []string{
	".go", ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".java", ".kt", ".kts",
	".scala", ".rs", ".rb", ".php", ".cs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh", ".m", ".mm",
	".swift", ".dart", ".lua", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".vue", ".svelte", ".sh", ".bash",
	".zsh", ".groovy", ".zig", ".nim", ".jl", ".r", ".pl", ".pm",
}

// isCodePath reports whether a path (or a word of a command line, quotes
// and a trailing ":" or "," left out) names a source file.
func isCodePath(p string) bool {
	p = strings.ToLower(strings.TrimRight(strings.Trim(p, `"'`), ":,;)"))
	return slices.ContainsFunc(codeExtensions, func(ext string) bool { return strings.HasSuffix(p, ext) && len(p) > len(ext) })
}

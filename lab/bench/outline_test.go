package benchlab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/spill"
)

// declared returns the lines outline finds in text, trimmed.
func declared(text string) []string {
	var out []string
	for _, d := range outline([]byte(text)) {
		out = append(out, strings.TrimSpace(text[d.start:d.end]))
	}
	return out
}

const goSnippet = `// Package cache keeps results by key.
package cache

import (
	"context"
	"sync"
)

// DefaultTTL is how long an entry lives.
const DefaultTTL = 5 * time.Minute

var ErrMissing = errors.New("cache: missing")

type Cache struct {
	mu      sync.Mutex
	entries map[string]entry
}

type Getter interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

func New(ttl time.Duration) *Cache {
	c := &Cache{entries: map[string]entry{}}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	go func() {
		c.sweep()
	}()
	return c
}

func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		fmt.Println(k, e)
	}
	return nil, ErrMissing
}
`

const pySnippet = `"""Record validation."""
import re
from typing import Optional

MAX_ID_LENGTH = 64


@dataclass
class RecordId:
    value: str

    def is_valid(self) -> bool:
        if not self.value:
            return False
        return len(self.value) <= MAX_ID_LENGTH


async def fetch_record(client, record_id: str) -> Optional[dict]:
    response = await client.get(f"/records/{record_id}")
    print(response)
    return response.json()


def validate_record_id(value):
    # def not_a_declaration(): a comment
    return re.match(r"^[a-z0-9-]+$", value) is not None
`

const tsSnippet = `import { performance } from 'perf_hooks';
import { validateRecordId, generateIdCacheKey } from '../utils/validation/id-validation.js';

export interface UniversalSearchParams {
  resource_type: string;
  limit?: number;
}

export type ErrorKind = 'user' | 'system';

const cache404Response = new Map<string, number>();

export async function handleUniversalSearch(params: UniversalSearchParams): Promise<AttioRecord[]> {
  const { resource_type, limit } = params;
  if (limit > 100) {
    throw new Error('limit too large');
  }
  return [];
}

export class RecordCache {
  private readonly entries: Map<string, AttioRecord>;

  constructor(private ttl: number) {
    this.entries = new Map();
  }

  async get(id: string): Promise<AttioRecord | undefined> {
    return this.entries.get(id);
  }

  handleMiss = async (id: string) => {
    console.log(id);
  };
}

describe('RecordCache', () => {
  it('returns undefined for a miss', async () => {
    expect(await new RecordCache(5).get('x')).toBeUndefined();
  });
});
`

const javaSnippet = `package com.example.records;

import java.util.List;
import java.util.Map;

/**
 * Validates record ids.
 */
@Service
public class RecordValidator implements Validator<Record> {
    private static final int MAX_LENGTH = 64;

    private final Map<String, Boolean> cache;

    public RecordValidator(Map<String, Boolean> cache) {
        this.cache = cache;
    }

    @Override
    public boolean validate(Record record) throws ValidationException {
        if (record == null) {
            return false;
        }
        for (String part : record.parts()) {
            System.out.println(part);
        }
        return cache.getOrDefault(record.id(), true);
    }

    protected static <T> List<T> firstPage(List<T> items,
            int size) {
        return items.subList(0, Math.min(size, items.size()));
    }
}
`

// TestOutline finds the declarations of real-looking Go, Python,
// TypeScript and Java files, and no statement, call, comment or import.
func TestOutline(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"go", goSnippet, []string{
			"const DefaultTTL = 5 * time.Minute", `var ErrMissing = errors.New("cache: missing")`, "type Cache struct {",
			"type Getter interface {", "func New(ttl time.Duration) *Cache {",
			"func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {",
		}},
		{"python", pySnippet, []string{
			"class RecordId:", "def is_valid(self) -> bool:", "async def fetch_record(client, record_id: str) -> Optional[dict]:",
			"def validate_record_id(value):",
		}},
		{"typescript", tsSnippet, []string{
			"export interface UniversalSearchParams {", "export type ErrorKind = 'user' | 'system';",
			"const cache404Response = new Map<string, number>();",
			"export async function handleUniversalSearch(params: UniversalSearchParams): Promise<AttioRecord[]> {",
			"const { resource_type, limit } = params;", "export class RecordCache {",
			"private readonly entries: Map<string, AttioRecord>;", "constructor(private ttl: number) {",
			"async get(id: string): Promise<AttioRecord | undefined> {", "handleMiss = async (id: string) => {",
		}},
		{"java", javaSnippet, []string{
			"public class RecordValidator implements Validator<Record> {", "private static final int MAX_LENGTH = 64;",
			"private final Map<String, Boolean> cache;", "public RecordValidator(Map<String, Boolean> cache) {",
			"public boolean validate(Record record) throws ValidationException {",
			"protected static <T> List<T> firstPage(List<T> items,",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := declared(c.text); !equalLines(got, c.want) {
				t.Errorf("outline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func equalLines(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// withLineNumbers prints text as a file reader shows it: each line after
// its number and sep ("→" for Claude Code's Read, a tab for nl -ba).
func withLineNumbers(text, sep string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			fmt.Fprintf(&b, "%6d%s%s", i+1, sep, l)
		}
	}
	return b.String()
}

// TestOutlineSkipsLineNumbers: a file shown with its line numbers (Read's
// "→", nl's tab) has the same outline, indentation included, as the file.
func TestOutlineSkipsLineNumbers(t *testing.T) {
	for _, sep := range []string{"→", "\t"} {
		for _, text := range []string{goSnippet, pySnippet, tsSnippet, javaSnippet} {
			plain, numbered := outline([]byte(text)), outline([]byte(withLineNumbers(text, sep)))
			if len(plain) != len(numbered) {
				t.Fatalf("sep %q: %d declarations numbered, %d plain", sep, len(numbered), len(plain))
			}
			for i := range plain {
				if plain[i].indent != numbered[i].indent || plain[i].local != numbered[i].local {
					t.Errorf("sep %q: declaration %d indent %d local %v numbered, %d %v plain", sep, i, numbered[i].indent, numbered[i].local, plain[i].indent, plain[i].local)
				}
			}
		}
	}
}

// TestIsDecl: one line each, the cases that tell a declaration from a
// statement.
func TestIsDecl(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"pub(crate) fn parse(input: &str) -> Result<Ast> {", true},
		{"impl<T: Display> fmt::Display for Wrapper<T> {", true},
		{"export { validateRecordId, generateIdCacheKey };", true},
		{"export default RecordCache;", true},
		{"function* walk(node) {", true},
		{"int main(int argc, char **argv) {", true},
		{"render() {", true},
		{"module.exports = { handleSearch };", false},
		{"console.log(value);", false},
		{"it('works', () => {", false},
		{"useEffect(() => {", false},
		{"} else if (x) {", false},
		{"if (err != nil) {", false},
		{"return validate(record) {", false},
		{"go func() {", false},
		{"x := compute(a, b)", false},
		{"// func commented(out) {", false},
		{"# def commented(out):", false},
		{"import { a } from 'b';", false},
		{"type the command below", true}, // prose reads as a declaration; looksLikeSource guards content-only results
		{"", false},
		{"\xff\xfe(", false},
	} {
		if got := isDecl(c.line); got != c.want {
			t.Errorf("isDecl(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

// TestSourceCall tells a read of a source file from other calls, by the
// tool and its arguments.
func TestSourceCall(t *testing.T) {
	for _, c := range []struct {
		name, args string
		want       bool
	}{
		{"Read", `{"file_path":"/repo/src/handlers/shared-handlers.ts"}`, true},
		{"read_file", `{"absolute_path":"/repo/pkg/cache.go"}`, true},
		{"str_replace_editor", `{"command":"view","path":"/repo/src/Main.java"}`, true},
		{"Read", `{"file_path":"/repo/docs/style-guide.md"}`, false},
		{"Grep", `{"pattern":"func ","path":"/repo/cache.go"}`, false},
		{"exec_command", `{"cmd":["bash","-lc","sed -n '1,200p' src/cache.py"]}`, true},
		{"shell", `{"command":["bash","-lc","nl -ba internal/engine.go | sed -n '100,300p'"]}`, true},
		{"bash", `{"command":"cd /repo && cat src/app.tsx"}`, true},
		{"bash", `{"command":"cat README.md"}`, false},
		{"bash", `{"command":"python src/app.py"}`, false},
		{"bash", `{"command":"grep -rn validate src/app.py"}`, false},
		{"bash", `not json`, false},
	} {
		call := &harness.ToolCall{Name: c.name, Args: json.RawMessage(c.args)}
		if got := sourceCall(call); got != c.want {
			t.Errorf("sourceCall(%s %s) = %v, want %v", c.name, c.args, got, c.want)
		}
	}
	if sourceCall(nil) {
		t.Error("sourceCall(nil) = true")
	}
}

// bigSource is a TypeScript file of about n bytes: functions of 40 lines
// each, numbered as Claude Code's Read shows them.
func bigSource(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "export async function handleStep%03d(params: StepParams): Promise<Result> {\n", i)
		for j := range 38 {
			fmt.Fprintf(&b, "  params.values[%d] = params.values[%d] + %d; // ordinary body line\n", j, j, i)
		}
		b.WriteString("}\n")
	}
	return withLineNumbers(b.String(), "→")
}

// renderOutline runs text through harness's result ceiling with pv as
// its preview, spilling to a temporary workspace, and returns the model
// copy.
func renderOutline(t testing.TB, pv guard.Preview, call *harness.ToolCall, text string) string {
	t.Helper()
	return renderOutlineCtx(t, context.Background(), pv, call, text)
}

// renderOutlineCtx is renderOutline with the call's context (its
// harness.CallInfo: the agent's message).
func renderOutlineCtx(t testing.TB, ctx context.Context, pv guard.Preview, call *harness.ToolCall, text string) string {
	t.Helper()
	g := (&guard.ResultPolicy{Preview: pv, Store: &spill.Dir{Workspace: t.TempDir()}}).Guard()
	res, err := g(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(text)}}, nil
	})(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	return res.ModelText()
}

// previewBytes is what a model copy shows besides the guard's marker.
func previewBytes(out string) int {
	i := strings.Index(out, "[harness:")
	if i < 0 {
		return len(out)
	}
	j := strings.Index(out[i:], "]\n")
	if j < 0 {
		return len(out) - i
	}
	return len(out) - (j + 2)
}

// TestOutlinePreview: a spilled source file shows its declarations, each
// gap naming the lines left out, within the preview's size; a result that
// is not source gets guard.Relevant's preview.
func TestOutlinePreview(t *testing.T) {
	src := bigSource(40 << 10)
	read := &harness.ToolCall{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"file_path":"/repo/src/steps.ts"}`)}
	for _, c := range []struct {
		name string
		pv   outlinePreview
		size int
	}{
		{"outline", outlinePreview{}, 4 << 10},
		{"head and tail", outlinePreview{head: 1 << 10, tail: 512}, 4 << 10},
		{"8 KiB", outlinePreview{size: 8 << 10}, 8 << 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := renderOutline(t, c.pv, read, src)
			if !strings.Contains(out, "handleStep000(") || !strings.Contains(out, "handleStep005(") {
				t.Errorf("the first declarations are not shown:\n%s", out)
			}
			if !strings.Contains(out, "not shown") || !strings.Contains(out, "(its outline)") {
				t.Errorf("no gap line or no reason in the marker:\n%s", out)
			}
			if n := previewBytes(out); n > c.size+len("\n\n") {
				t.Errorf("preview of %d bytes, more than its %d", n, c.size)
			}
			if c.pv.tail > 0 && !strings.HasSuffix(strings.TrimRight(out, "\n"), "}") {
				t.Errorf("the tail is not shown:\n%s", out[len(out)-200:])
			}
		})
	}
	t.Run("relevant first", func(t *testing.T) {
		src := strings.Replace(src, "params.values[7] = params.values[7] + 10;", "const magicNeedleValue = params.values[7] + 10;", 1)
		msg := &harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Where is magicNeedleValue set?")}}
		ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Message: msg})
		out := renderOutlineCtx(t, ctx, outlinePreview{relevant: 3 << 10}, read, src)
		if !strings.Contains(out, "const magicNeedleValue") || !strings.Contains(out, "handleStep001(") {
			t.Errorf("the matching line or the outline is not shown:\n%s", out)
		}
		if n := previewBytes(out); n > 4<<10+len("\n\n") {
			t.Errorf("preview of %d bytes, more than 4 KiB", n)
		}
	})
	t.Run("not source", func(t *testing.T) {
		logCall := &harness.ToolCall{ID: "call_2", Name: "bash", Args: json.RawMessage(`{"command":"cat build.log"}`)}
		var b strings.Builder
		for i := 0; b.Len() < 40<<10; i++ {
			fmt.Fprintf(&b, "step %d: compiled package number %d without warnings\n", i, i)
		}
		got := renderOutline(t, outlinePreview{}, logCall, b.String())
		want := renderOutline(t, guard.Relevant{}, logCall, b.String())
		if stripSpill(got) != stripSpill(want) {
			t.Errorf("a log's preview differs from guard.Relevant's:\n%s\nwant:\n%s", got, want)
		}
	})
}

// stripSpill drops the spill file's path, which names a temporary folder.
func stripSpill(s string) string {
	i := strings.Index(s, ".harness/spill/")
	if i < 0 {
		return s
	}
	j := strings.IndexByte(s[i:], ' ')
	return s[:i] + s[i+j:]
}

// TestOutlineInvalidUTF8: invalid bytes in a source file reach the model
// as U+FFFD, never raw, and the preview keeps its size.
func TestOutlineInvalidUTF8(t *testing.T) {
	src := strings.ReplaceAll(bigSource(30<<10), "ordinary", "ord\xffin\xc3ary")
	src = strings.Replace(src, "handleStep002", "handle\xe2\x82Step002", 1)
	read := &harness.ToolCall{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"file_path":"/repo/src/steps.ts"}`)}
	out := renderOutline(t, outlinePreview{head: 1 << 10, tail: 512}, read, src)
	if !bytes.ContainsRune([]byte(out), '\uFFFD') || strings.Contains(out, "\xff") {
		t.Errorf("invalid UTF-8 not replaced:\n%q", out)
	}
	if !strings.Contains(out, "handleStep003(") {
		t.Errorf("declarations lost:\n%s", out)
	}
	if n := previewBytes(out); n > 4<<10+len("\n\n") {
		t.Errorf("preview of %d bytes, more than 4 KiB", n)
	}
}

// TestImportLines finds import statements whole, multi-line blocks
// included, and nothing else.
func TestImportLines(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"go", goSnippet, []string{"import (\n\t\"context\"\n\t\"sync\"\n)"}},
		{"python", pySnippet, []string{"import re", "from typing import Optional"}},
		{"typescript", tsSnippet, []string{"import { performance } from 'perf_hooks';",
			"import { validateRecordId, generateIdCacheKey } from '../utils/validation/id-validation.js';"}},
		{"typescript block", "import {\n  searchPeople,\n  createPerson\n} from './people.js';\nconst x = 1;\n",
			[]string{"import {\n  searchPeople,\n  createPerson\n} from './people.js';"}},
		{"java", javaSnippet, []string{"import java.util.List;", "import java.util.Map;"}},
		{"rust and c", "use std::fmt;\n#include <stdio.h>\nfn main() {}\n", []string{"use std::fmt;", "#include <stdio.h>"}},
		{"numbered", withLineNumbers("import os\nx = 1\n", "→"), []string{"1→import os"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range importLines([]byte(c.text)) {
				if !d.imp {
					t.Errorf("import at %d not marked imp", d.start)
				}
				got = append(got, strings.TrimSpace(c.text[d.start:d.end]))
			}
			if !equalLines(got, c.want) {
				t.Errorf("imports:\n%q\nwant:\n%q", got, c.want)
			}
		})
	}
}

// TestOutlineSpansRank: the outline proposes top-level declarations, then
// imports, then members by indentation, then the variables of function
// bodies, each group in text order.
func TestOutlineSpansRank(t *testing.T) {
	text := []byte(tsSnippet)
	decls := append(outline(text), importLines(text)...)
	slices.SortStableFunc(decls, func(a, b declLine) int { return a.start - b.start })
	var got []string
	for _, sp := range outlineSpans(text, decls, 0, 0, 1) { // size 1: the outline only, no head lines
		got = append(got, strings.TrimSpace(string(text[sp.Start:sp.End])))
	}
	want := []string{
		"export interface UniversalSearchParams {", "export type ErrorKind = 'user' | 'system';",
		"const cache404Response = new Map<string, number>();",
		"export async function handleUniversalSearch(params: UniversalSearchParams): Promise<AttioRecord[]> {",
		"export class RecordCache {",
		"import { performance } from 'perf_hooks';",
		"import { validateRecordId, generateIdCacheKey } from '../utils/validation/id-validation.js';",
		"private readonly entries: Map<string, AttioRecord>;", "constructor(private ttl: number) {",
		"async get(id: string): Promise<AttioRecord | undefined> {", "handleMiss = async (id: string) => {",
		"const { resource_type, limit } = params;",
	}
	if !equalLines(got, want) {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package workspace

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// newTestWorkspace creates a workspace in a fresh temporary directory with
// files (path → content; a path ending in "/" is a folder) and returns it
// with the directory.
func newTestWorkspace(t testing.TB, opts *Options, files map[string]string) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

// tool returns the workspace tool named name.
func tool(t testing.TB, w *Workspace, name string) harness.Tool {
	t.Helper()
	for _, tl := range w.Tools() {
		if tl.Spec.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return harness.Tool{}
}

// run calls tool name with args (a Go value marshalled to JSON), approved,
// and returns the result with any stream drained into a text part, as the
// agent does.
func run(t testing.TB, w *Workspace, name string, args any) *harness.ToolResult {
	t.Helper()
	return runCtx(context.Background(), t, w, name, args)
}

func runCtx(ctx context.Context, t testing.TB, w *Workspace, name string, args any) *harness.ToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := harness.CallInfoFrom(ctx); !ok {
		ctx = approved(ctx)
	}
	res, err := tool(t, w, name).Func(ctx, &harness.ToolCall{ID: "c1", Name: name, Args: raw})
	if err != nil {
		t.Fatalf("%s(%s): Go error %v", name, raw, err)
	}
	if res.Stream != nil {
		b, err := io.ReadAll(res.Stream)
		res.Stream.Close()
		if err != nil {
			t.Fatalf("%s: reading stream: %v", name, err)
		}
		res.Stream = nil
		res.Parts = append(res.Parts, harness.TextPart(string(b)))
	}
	return res
}

// approved returns ctx as an agent whose approver said yes passes it, so
// that an ask-mode workspace (the zero Options) runs its writes.
func approved(ctx context.Context) context.Context {
	return harness.WithCallInfo(ctx, harness.CallInfo{Approved: true})
}

// mustOK fails the test when res is an error result, and returns its text.
func mustOK(t testing.TB, res *harness.ToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.FullText())
	}
	return res.FullText()
}

// mustFail fails the test unless res is an error result whose text
// contains every want, and returns its text.
func mustFail(t testing.TB, res *harness.ToolResult, want ...string) string {
	t.Helper()
	text := res.FullText()
	if !res.IsError {
		t.Fatalf("want an error result, got: %s", text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Fatalf("error result lacks %q: %s", w, text)
		}
	}
	return text
}

// stripNumbers removes read_file's line-number prefixes and its closing
// status line, returning the file text the page shows.
func stripNumbers(t testing.TB, page string) string {
	t.Helper()
	lines := strings.Split(page, "\n")
	var b strings.Builder
	for _, l := range lines[:len(lines)-1] { // the last line is the status
		_, text, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("line without a number: %q", l)
		}
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.String()
}

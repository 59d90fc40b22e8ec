package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/spill"
)

// rpEvents collects the events a guard emits.
type rpEvents struct {
	mu  sync.Mutex
	all []harness.Event
}

func (e *rpEvents) observe(ev harness.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *rpEvents) kind(k harness.EventKind) []harness.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []harness.Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// rpContext returns a context as the agent builds it for a call.
func rpContext(ws, conv string, risk harness.Risk, ev *rpEvents) context.Context {
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{
		Conversation: conv, Turn: 1, Round: 1, Workspace: ws,
		Spec: harness.ToolSpec{Name: "tool", Risk: risk},
	})
	if ev != nil {
		ctx = harness.WithObserver(ctx, ev.observe)
	}
	return ctx
}

// rpCall runs one call through a ResultPolicy's guard with a tool that
// returns res.
func rpCall(t testing.TB, p *ResultPolicy, ctx context.Context, name, id string, res *harness.ToolResult) *harness.ToolResult {
	t.Helper()
	return rpCallWith(t, p.Guard(), ctx, name, id, `{}`, res)
}

func rpCallWith(t testing.TB, g harness.Guard, ctx context.Context, name, id, args string, res *harness.ToolResult) *harness.ToolResult {
	t.Helper()
	fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) { return res, nil }, g)
	out, err := fn(ctx, &harness.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("guarded call failed: %v", err)
	}
	return out
}

// rpLog is a build log of about n bytes whose last line is the verdict.
func rpLog(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n-40; i++ {
		fmt.Fprintf(&b, "step %05d: compiling package number %d ok\n", i, i)
	}
	b.WriteString("FAIL: TestVerdict (exit status 1)\n")
	return b.String()
}

func rpModelText(res *harness.ToolResult) string { return harness.Message{Parts: res.Model}.Text() }

func rpSpillFiles(t *testing.T, ws string) []string {
	t.Helper()
	var files []string
	root := filepath.Join(ws, filepath.FromSlash(spill.Folder))
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ws, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files
}

func rpClone(res *harness.ToolResult) *harness.ToolResult {
	c := *res
	c.Parts = append([]harness.Part(nil), res.Parts...)
	return &c
}

// TestResultPolicySeedBehaviour is the per-result guard's behaviour table.
func TestResultPolicySeedBehaviour(t *testing.T) {
	bigJSON := func(n int) string {
		var items []map[string]any
		for i := 0; len(items)*60 < n; i++ {
			items = append(items, map[string]any{"id": i, "name": fmt.Sprintf("row-%d", i), "ok": i%2 == 0})
		}
		b, _ := json.Marshal(items)
		return string(b)
	}
	type want struct {
		cut      harness.CutKind // "" = untouched
		ext      string          // spill file extension, "" = no file
		contains []string        // in the model copy
	}
	log100k := rpLog(100 << 10)
	cases := []struct {
		name   string
		policy *ResultPolicy
		tool   string
		ws     bool
		res    func() *harness.ToolResult
		want   want
	}{
		{"under the ceiling: untouched", nil, "read_file", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(20 << 10)) }, want{}},
		{"over the ceiling: spilled as raw text, head and verdict shown", nil, "shell", true,
			func() *harness.ToolResult { return harness.TextResult(log100k) },
			want{harness.CutSpilled, "txt", []string{"step 00001", "FAIL: TestVerdict", "shell returned " + fmt.Sprint(len(log100k)) + " bytes", ".harness/spill/c_1/call_1-shell.txt", "read_file", "grep", "offset"}}},
		{"ceiling off: nothing is cut", &ResultPolicy{NoCeiling: true}, "shell", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(1 << 20)) }, want{}},
		{"same payload as text and structured counts once", nil, "mcp_query", true,
			func() *harness.ToolResult {
				j := bigJSON(15 << 10)
				return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(j)}, Structured: json.RawMessage(j)}
			}, want{}},
		{"no text part holds 80%: pretty JSON spill", nil, "mcp_query", true,
			func() *harness.ToolResult {
				return &harness.ToolResult{Parts: []harness.Part{harness.TextPart(rpLog(12 << 10))}, Structured: json.RawMessage(bigJSON(20 << 10))}
			}, want{harness.CutSpilled, "json", []string{`"parts": [`, ".json"}}},
		{"one-line JSON text: pretty JSON spill, pageable by line", nil, "mcp_query", true,
			func() *harness.ToolResult { return harness.TextResult(bigJSON(60 << 10)) },
			want{harness.CutSpilled, "json", []string{`"id": 0,`, "lines"}}},
		{"spill off: head+tail truncation, rest in the transcript", &ResultPolicy{NoSpill: true}, "shell", true,
			func() *harness.ToolResult { return harness.TextResult(log100k) },
			want{harness.CutTruncated, "", []string{"step 00001", "FAIL: TestVerdict", "transcript only", "spilling is off"}}},
		{"no workspace: truncation", nil, "shell", false,
			func() *harness.ToolResult { return harness.TextResult(log100k) },
			want{harness.CutTruncated, "", []string{"transcript only", "no workspace"}}},
		{"per-tool ceiling", &ResultPolicy{Tools: map[string]ToolLimit{"tiny": {MaxBytes: 1024}}}, "tiny", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(2 << 10)) },
			want{harness.CutSpilled, "txt", []string{"1024 B limit", "call_1-tiny.txt"}}},
		{"per-tool exemption", &ResultPolicy{Tools: map[string]ToolLimit{"vision": {Exempt: true}}}, "vision", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(1 << 20)) }, want{}},
		{"per-tool ceiling off", &ResultPolicy{Tools: map[string]ToolLimit{"cat": {NoCeiling: true}}}, "cat", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(1 << 20)) }, want{}},
		{"error results are capped too", nil, "shell", true,
			func() *harness.ToolResult { return harness.ErrorResult("%s", log100k) },
			want{harness.CutSpilled, "txt", []string{"FAIL: TestVerdict"}}},
		{"a negative ceiling is the default, not off", &ResultPolicy{MaxBytes: -1}, "shell", true,
			func() *harness.ToolResult { return harness.TextResult(log100k) },
			want{harness.CutSpilled, "txt", []string{"24576-byte limit"}}},
		{"ceiling off for the policy, a tool's own ceiling still holds", &ResultPolicy{NoCeiling: true, Tools: map[string]ToolLimit{"tiny": {MaxBytes: 1024}}}, "tiny", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(2 << 10)) },
			want{harness.CutSpilled, "txt", []string{"1024 B limit"}}},
		{"a ceiling under the minimum is raised to 256 bytes", &ResultPolicy{MaxBytes: 10}, "shell", true,
			func() *harness.ToolResult { return harness.TextResult(rpLog(4 << 10)) },
			want{harness.CutSpilled, "txt", []string{".harness/spill/c_1/call_1-shell.txt"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := ""
			if tc.ws {
				ws = t.TempDir()
			}
			in := tc.res()
			before := rpClone(in)
			ev := &rpEvents{}
			out := rpCall(t, tc.policy, rpContext(ws, "c_1", harness.ReadOnly, ev), tc.tool, "call_1", in)
			if !reflect.DeepEqual(out.Parts, before.Parts) || string(out.Structured) != string(before.Structured) {
				t.Fatal("the stored payload was modified")
			}
			limit := newResultGuard(tc.policy).limit
			if tl, ok := tc.policy.toolLimit(tc.tool); ok {
				limit = tl
			}
			if tc.want.cut == "" {
				if out.Model != nil || len(out.Cuts) != 0 {
					t.Fatalf("result was cut: %+v", out.Cuts)
				}
				if files := rpSpillFiles(t, ws); ws != "" && len(files) != 0 {
					t.Fatalf("spill files written: %v", files)
				}
				return
			}
			if len(out.Cuts) != 1 || out.Cuts[0].Kind != tc.want.cut {
				t.Fatalf("cuts %+v, want one %s", out.Cuts, tc.want.cut)
			}
			cut := out.Cuts[0]
			text := rpModelText(out)
			if len(text) > limit || cut.BytesOut != len(text) {
				t.Fatalf("model copy %d bytes (cut says %d), ceiling %d", len(text), cut.BytesOut, limit)
			}
			if cut.BytesIn != in.PayloadSize() || out.Bytes != in.PayloadSize() || cut.By != ResultPolicyName {
				t.Fatalf("cut %+v, bytes %d, payload %d", cut, out.Bytes, in.PayloadSize())
			}
			for _, s := range tc.want.contains {
				if !strings.Contains(text, s) {
					t.Errorf("model copy lacks %q:\n%s", s, text)
				}
			}
			files := rpSpillFiles(t, ws)
			if tc.want.ext == "" {
				if len(files) != 0 || cut.Locator != "call:call_1" {
					t.Fatalf("files %v, locator %q", files, cut.Locator)
				}
			} else {
				if len(files) != 1 || files[0] != cut.Locator || !strings.HasSuffix(cut.Locator, "."+tc.want.ext) {
					t.Fatalf("files %v, locator %q, want one .%s", files, cut.Locator, tc.want.ext)
				}
				data, err := os.ReadFile(filepath.Join(ws, cut.Locator))
				if err != nil {
					t.Fatal(err)
				}
				if tc.want.ext == "txt" && string(data) != in.FullText() {
					t.Fatal("the .txt spill is not the full payload")
				}
				if tc.want.ext == "json" && !json.Valid(data) {
					t.Fatal("the .json spill is not valid JSON")
				}
			}
			pol := ev.kind(harness.EventPolicy)
			if len(pol) != 1 || pol[0].Policy != ResultPolicyName || pol[0].Data["bytes_in"] != cut.BytesIn || pol[0].Data["bytes_shown"] != len(text) {
				t.Fatalf("policy events %+v", pol)
			}
			if cut.Kind == harness.CutSpilled && pol[0].Data["spill_path"] != cut.Locator {
				t.Fatalf("event lacks the spill path: %+v", pol[0].Data)
			}
		})
	}
}

// toolLimit returns the ceiling a policy gives a tool, for tests.
func (p *ResultPolicy) toolLimit(tool string) (int, bool) {
	g := newResultGuard(p)
	if _, ok := g.tools[tool]; !ok {
		return 0, false
	}
	l, _ := g.limitFor(tool)
	return l, true
}

func TestResultPolicyTruncationUsesTheWholeCeiling(t *testing.T) {
	in := harness.TextResult(rpLog(100 << 10))
	out := rpCall(t, &ResultPolicy{NoSpill: true}, rpContext("", "c", harness.ReadOnly, nil), "shell", "call_1", in)
	// With nothing to page, the preview gets the ceiling, not 4 KiB.
	if n := len(rpModelText(out)); n < DefaultMaxBytes*9/10 || n > DefaultMaxBytes {
		t.Fatalf("truncated copy is %d bytes, want close to %d", n, DefaultMaxBytes)
	}
	spilled := rpCall(t, nil, rpContext(t.TempDir(), "c", harness.ReadOnly, nil), "shell", "call_1", harness.TextResult(rpLog(100<<10)))
	if n := len(rpModelText(spilled)); n > defaultPreviewHead+defaultPreviewTail+1024 {
		t.Fatalf("spilled preview is %d bytes, want about %d", n, defaultPreviewHead+defaultPreviewTail)
	}
}

func TestResultPolicyMarkerLineNumbers(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "read_file", "call_9", harness.TextResult(b.String()))
	text := rpModelText(out)
	head, rest, ok := strings.Cut(text, "\n\n[harness: ")
	if !ok {
		t.Fatalf("no marker:\n%s", text)
	}
	marker, tail, _ := strings.Cut(rest, "]\n\n")
	lastHead := strings.TrimPrefix(head[strings.LastIndexByte(strings.TrimSuffix(head, "\n"), '\n')+1:], "line ")
	firstTail := strings.TrimPrefix(tail[:strings.IndexByte(tail, '\n')], "line ")
	if !strings.HasSuffix(head, "\n") || !strings.HasPrefix(tail, "line ") {
		t.Fatalf("preview not cut at line breaks: head ends %q, tail starts %q", head[len(head)-10:], tail[:10])
	}
	for _, s := range []string{"(5000 lines)", "up to line " + strings.TrimSuffix(lastHead, "\n"), "from line " + firstTail} {
		if !strings.Contains(marker, s) {
			t.Errorf("marker lacks %q: %s", s, marker)
		}
	}
}

func TestResultPolicyUnwritableWorkspaceFallsBack(t *testing.T) {
	ws := t.TempDir()
	// Tests run as root, for whom a 0500 folder is writable: a file where
	// the .harness folder should be is unwritable for everyone.
	if err := os.WriteFile(filepath.Join(ws, ".harness"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &rpEvents{}
	in := harness.TextResult(rpLog(100 << 10))
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, ev), "shell", "call_1", in)
	if out.IsError || len(out.Cuts) != 1 || out.Cuts[0].Kind != harness.CutTruncated || out.Cuts[0].Locator != "call:call_1" {
		t.Fatalf("result %+v", out.Cuts)
	}
	text := rpModelText(out)
	for _, s := range []string{"transcript only", "saving it failed", "FAIL: TestVerdict", "step 00001"} {
		if !strings.Contains(text, s) {
			t.Errorf("model copy lacks %q", s)
		}
	}
	if len(text) > DefaultMaxBytes {
		t.Fatalf("copy %d bytes over the ceiling", len(text))
	}
	if len(ev.kind(harness.EventWarning)) != 1 {
		t.Fatalf("want one warning, got %+v", ev.all)
	}
}

func TestResultPolicyNoSpillOfASpill(t *testing.T) {
	ws := t.TempDir()
	ctx := rpContext(ws, "c", harness.ReadOnly, nil)
	page := func(n int, path string) *harness.ToolResult {
		r := harness.TextResult(rpLog(n))
		r.Meta = map[string]any{"path": path}
		return r
	}
	small := rpCall(t, nil, ctx, "read_file", "call_2", page(20<<10, ".harness/spill/c/call_1-shell.txt"))
	if small.Model != nil || len(small.Cuts) != 0 {
		t.Fatal("a page that fits was cut")
	}
	for _, p := range []string{".harness/spill/c/call_1-shell.txt", "./.harness/spill/c/x.txt", filepath.Join(ws, ".harness/spill/c/y.txt")} {
		big := rpCall(t, nil, ctx, "read_file", "call_3", page(100<<10, p))
		if len(big.Cuts) != 1 || big.Cuts[0].Kind != harness.CutTruncated {
			t.Fatalf("%s: cuts %+v", p, big.Cuts)
		}
		text := rpModelText(big)
		if len(text) > DefaultMaxBytes || !strings.Contains(text, "not saved again") || !strings.Contains(text, "smaller limit") {
			t.Fatalf("%s: copy %d bytes:\n%s", p, len(text), text[len(text)/2-400:len(text)/2+400])
		}
	}
	if files := rpSpillFiles(t, ws); len(files) != 0 {
		t.Fatalf("a spill page was spilled again: %v", files)
	}
	// Any other read is spilled as usual.
	other := rpCall(t, nil, ctx, "read_file", "call_4", page(100<<10, "docs/.harness-notes.txt"))
	if other.Cuts[0].Kind != harness.CutSpilled {
		t.Fatalf("cuts %+v", other.Cuts)
	}
}

func TestResultPolicyConcurrentSpillsInOneConversation(t *testing.T) {
	ws := t.TempDir()
	g := (&ResultPolicy{}).Guard()
	const n = 24
	outs := make([]*harness.ToolResult, n)
	ins := make([]*harness.ToolResult, n)
	var wg sync.WaitGroup
	for i := range n {
		ins[i] = harness.TextResult(fmt.Sprintf("call %d\n", i) + rpLog(40<<10+i*100))
		id := fmt.Sprintf("call_%d", i%8) // ids repeat, as some models send them
		wg.Go(func() {
			outs[i] = rpCallWith(t, g, rpContext(ws, "c_shared", harness.ReadOnly, nil), "shell", id, `{}`, ins[i])
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, out := range outs {
		if len(out.Cuts) != 1 || out.Cuts[0].Kind != harness.CutSpilled {
			t.Fatalf("call %d: %+v", i, out.Cuts)
		}
		loc := out.Cuts[0].Locator
		if seen[loc] {
			t.Fatalf("two calls spilled to %s", loc)
		}
		seen[loc] = true
		data, err := os.ReadFile(filepath.Join(ws, loc))
		if err != nil || string(data) != ins[i].FullText() {
			t.Fatalf("call %d: spill %s does not hold its payload (%v)", i, loc, err)
		}
	}
	if files := rpSpillFiles(t, ws); len(files) != n {
		t.Fatalf("%d files for %d spills", len(files), n)
	}
}

func TestResultPolicyImagesAndInvalidUTF8(t *testing.T) {
	ws := t.TempDir()
	bad := strings.Repeat("\xff\xfe日本語\xe6\x97", 20<<10)
	in := &harness.ToolResult{Parts: []harness.Part{harness.TextPart(bad), harness.ImagePart("image/png", make([]byte, 1000))}}
	out := rpCall(t, nil, rpContext(ws, "c", harness.ReadOnly, nil), "vision", "call_1", in)
	text := rpModelText(out)
	if !utf8.ValidString(text) || len(text) > DefaultMaxBytes {
		t.Fatalf("copy valid=%v len=%d", utf8.ValidString(text), len(text))
	}
	if n := len(out.Model); n != 2 || out.Model[1].Type != harness.PartImage || len(out.Model[1].Data) != 1000 {
		t.Fatalf("the image did not reach the model whole: %d parts", n)
	}
	if len(out.Parts) != 2 || out.Parts[0].Text != bad {
		t.Fatal("stored payload changed")
	}
}

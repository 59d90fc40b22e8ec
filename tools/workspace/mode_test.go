package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

func names(tools []harness.Tool) string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Spec.Name)
	}
	return strings.Join(n, ",")
}

func TestToolsAndRisks(t *testing.T) {
	w, _ := newTestWorkspace(t, &Options{Shell: true}, nil)
	tools := w.Tools()
	if got := names(tools); got != "read_file,list_dir,glob,grep,write_file,edit_file,shell" {
		t.Fatalf("tools %s", got)
	}
	want := map[string]harness.Risk{
		"read_file": harness.ReadOnly, "list_dir": harness.ReadOnly, "glob": harness.ReadOnly, "grep": harness.ReadOnly,
		"write_file": harness.Destructive, "edit_file": harness.Destructive, "shell": harness.Destructive,
	}
	for _, tl := range tools {
		if tl.Spec.Risk != want[tl.Spec.Name] {
			t.Errorf("%s risk %v, want %v", tl.Spec.Name, tl.Spec.Risk, want[tl.Spec.Name])
		}
		var schema map[string]any
		if err := json.Unmarshal(tl.Spec.InputSchema, &schema); err != nil {
			t.Fatalf("%s schema: %v", tl.Spec.Name, err)
		}
		if schema["additionalProperties"] != false || schema["type"] != "object" {
			t.Errorf("%s schema is not strict: %s", tl.Spec.Name, tl.Spec.InputSchema)
		}
		for prop, v := range schema["properties"].(map[string]any) {
			if d, _ := v.(map[string]any)["description"].(string); len(d) < 10 {
				t.Errorf("%s.%s has no real description", tl.Spec.Name, prop)
			}
		}
		if len(tl.Spec.Description) < 150 || !strings.Contains(tl.Spec.Description, "Arguments:") {
			t.Errorf("%s description is not a retrieval key: %q", tl.Spec.Name, tl.Spec.Description)
		}
	}
	// The specs are byte-identical on every call (cacheable prefix).
	again := w.Tools()
	for i := range tools {
		if string(tools[i].Spec.InputSchema) != string(again[i].Spec.InputSchema) || tools[i].Spec.Description != again[i].Spec.Description {
			t.Fatalf("%s spec changed between calls", tools[i].Spec.Name)
		}
	}
	// The agent accepts them all: names unique, schemas compile.
	if _, err := harness.New(harness.ModelFunc(func(context.Context, *harness.Request) (*harness.Response, error) { return nil, nil }), &harness.Options{Tools: tools}); err != nil {
		t.Fatal(err)
	}
}

func TestFilterByMode(t *testing.T) {
	w, _ := newTestWorkspace(t, &Options{Shell: true}, nil)
	all := w.Tools()
	fetch := harness.Tool{Spec: harness.ToolSpec{Name: "fetch", Risk: harness.ReadOnly | harness.Network}}
	idem := harness.Tool{Spec: harness.ToolSpec{Name: "mkdir", Risk: harness.Idempotent}}
	bare := harness.Tool{Spec: harness.ToolSpec{Name: "bare"}}
	all = append(all, fetch, idem, bare)
	if got := names(filterByMode(all, ModeReadOnly)); got != "read_file,list_dir,glob,grep,fetch" {
		t.Fatalf("read-only: %s", got)
	}
	if got := filterByMode(all, ModeAuto); len(got) != len(all) {
		t.Fatalf("auto dropped tools")
	}
	if got := filterByMode(all, ModeAsk); len(got) != len(all) {
		t.Fatalf("ask dropped tools")
	}
	ro, _ := newTestWorkspace(t, &Options{Shell: true, Mode: ModeReadOnly}, nil)
	if got := names(ro.Tools()); got != "read_file,list_dir,glob,grep" {
		t.Fatalf("read-only workspace offers %s", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"ask": ModeAsk, "AUTO": ModeAuto, "read-only": ModeReadOnly, "readonly": ModeReadOnly, " ro ": ModeReadOnly} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "read-only, auto or ask") {
		t.Errorf("bad mode: %v", err)
	}
	var m Mode
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&m, "mode", "")
	if err := fs.Parse([]string{"--mode", "read-only"}); err != nil || m != ModeReadOnly || m.String() != "read-only" {
		t.Fatalf("flag: %v %v", m, err)
	}
	if err := fs.Parse([]string{"--mode", "nope"}); err == nil {
		t.Fatal("flag accepted a bad mode")
	}
}

func TestApproverFor(t *testing.T) {
	ctx := context.Background()
	write := harness.ToolSpec{Name: "write_file", Risk: harness.Destructive}
	fetch := harness.ToolSpec{Name: "fetch", Risk: harness.ReadOnly | harness.Network}
	var asked []string
	yes := func(_ context.Context, c harness.ToolCall, _ harness.ToolSpec) (bool, error) {
		asked = append(asked, c.Name)
		return true, nil
	}
	if ApproverFor(ModeAuto, yes) != nil {
		t.Fatal("auto must not ask")
	}
	check := func(a harness.Approver, spec harness.ToolSpec, want bool) {
		t.Helper()
		got, err := a(ctx, harness.ToolCall{Name: spec.Name}, spec)
		if err != nil || got != want {
			t.Fatalf("%s: %v %v, want %v", spec.Name, got, err, want)
		}
	}
	check(ApproverFor(ModeAsk, yes), write, true)
	check(ApproverFor(ModeAsk, nil), write, false)
	check(ApproverFor(ModeReadOnly, yes), write, false)
	check(ApproverFor(ModeReadOnly, yes), fetch, true)
	check(ApproverFor(ModeReadOnly, nil), fetch, false)
	if strings.Join(asked, ",") != "write_file,fetch" {
		t.Fatalf("asked %v", asked)
	}
}

// syncBuffer is an io.Writer safe for the approver and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTerminalApprover(t *testing.T) {
	ctx := context.Background()
	shell := harness.ToolSpec{Name: "shell", Risk: harness.Destructive}
	write := harness.ToolSpec{Name: "write_file", Risk: harness.Destructive}
	var out syncBuffer
	a := TerminalApprover(strings.NewReader("y\nn\n\na\nYES\n"), &out)
	call := func(spec harness.ToolSpec, args string) bool {
		t.Helper()
		ok, err := a(ctx, harness.ToolCall{Name: spec.Name, Args: json.RawMessage(args)}, spec)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !call(shell, `{"command":"rm -rf build\u001b[2K\rok"}`) {
		t.Fatal("y refused")
	}
	if call(shell, `{"command":"ls"}`) || call(shell, `{"command":"ls"}`) {
		t.Fatal("n or an empty line approved")
	}
	if !call(write, `{"path":"a.txt","content":"line1\nline2\n"}`) {
		t.Fatal("a refused")
	}
	if !call(write, `{"path":"b.txt","content":""}`) {
		t.Fatal("always did not stick")
	}
	if !call(shell, `{"command":"ls"}`) {
		t.Fatal("YES refused")
	}
	if call(shell, `{"command":"ls"}`) {
		t.Fatal("approved at end of input")
	}
	text := out.String()
	for _, want := range []string{
		"The agent wants to run shell (destructive):\n  command: rm -rf build\\x1b[2K\\rok\n",
		"Allow? [y]es / [N]o / [a]lways allow shell: ",
		"  content: 12 bytes, 2 lines\n    | line1\n    | line2\n",
		"(no more input: refused)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Error("an escape sequence reached the terminal")
	}
	if strings.Count(text, "wants to run write_file") != 1 {
		t.Error("always-approved tool was asked again")
	}
}

// TestTerminalApproverCancel: a question abandoned by a cancelled context
// returns at once, and the answer typed later is not taken for the next
// question.
func TestTerminalApproverCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	a := TerminalApprover(pr, &out)
	spec := harness.ToolSpec{Name: "shell", Risk: harness.Destructive}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ok, err := a(ctx, harness.ToolCall{Name: "shell"}, spec)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled question: %v %v", ok, err)
	}
	io.WriteString(pw, "y\n") // the late answer to the abandoned question
	time.Sleep(50 * time.Millisecond)
	done := make(chan bool)
	go func() {
		ok, _ := a(context.Background(), harness.ToolCall{Name: "shell"}, spec)
		done <- ok
	}()
	time.Sleep(50 * time.Millisecond)
	io.WriteString(pw, "n\n")
	if <-done {
		t.Fatal("the late 'y' answered the next question")
	}
}

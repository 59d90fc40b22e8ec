package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
)

// lines is a tool printing n numbered lines of a test log.
func lines(n int) harness.ToolFunc {
	return func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString("tests/test_mod.py::test_case PASSED line ")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString("\n")
		}
		b.WriteString("=== 1 failed, 199 passed ===\n")
		return harness.TextResult(b.String()), nil
	}
}

func TestRunCeiling(t *testing.T) {
	ws := t.TempDir()
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 1, Workspace: ws})
	for _, tc := range []struct {
		name, tool, args string
		cut              bool
	}{
		{"a test run is cut", "bash", `{"command": "pytest -q"}`, true},
		{"a shell named in any case", "Bash", `{"command": "python t.py"}`, true},
		{"a read keeps its copy", "bash", `{"command": "cat log.txt"}`, false},
		{"a tool that is no shell", "run_tests", `{"command": "pytest"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := harness.Chain(lines(400), (&guard.RunCeiling{MaxBytes: 2048}).Guard())
			res, err := fn(ctx, &harness.ToolCall{ID: "call_" + strings.ReplaceAll(tc.name, " ", "_"), Name: tc.tool, Args: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.ModelText()) <= 2048 && len(res.Cuts) == 1; got != tc.cut {
				t.Fatalf("cut = %v (model copy %d bytes, cuts %v), want %v", got, len(res.ModelText()), res.Cuts, tc.cut)
			}
			if !tc.cut {
				if res.ModelText() != res.FullText() {
					t.Fatal("a call that is no run changed")
				}
				return
			}
			if res.Cuts[0].Kind != harness.CutSpilled || !strings.Contains(res.ModelText(), "1 failed, 199 passed") {
				t.Fatalf("want a spill whose preview keeps the verdict; got %v:\n%s", res.Cuts[0], res.ModelText())
			}
			saved, err := os.ReadFile(ws + "/" + res.Cuts[0].Locator)
			if err != nil || string(saved) != res.FullText() {
				t.Fatalf("spill file does not hold the full output (%v)", err)
			}
		})
	}
}

// TestRunCeilingUnderTheDefault checks the intended order: inside the
// default ceiling, a run is cut once, to the lower ceiling.
func TestRunCeilingUnderTheDefault(t *testing.T) {
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 1, Workspace: t.TempDir()})
	fn := harness.Chain(lines(2000), (&guard.ResultPolicy{}).Guard(), (&guard.RunCeiling{}).Guard())
	res, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"command": "make test"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cuts) != 1 || len(res.ModelText()) > guard.DefaultRunCeilingBytes {
		t.Fatalf("cuts %v, model copy %d bytes", res.Cuts, len(res.ModelText()))
	}
}

// The output of a test run gets a lower ceiling than the default's 24 KiB;
// a read of a file keeps the default.
func ExampleRunCeiling() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c_demo", Turn: 1, Round: 1, Workspace: ws})
	fn := harness.Chain(lines(300), (&guard.ResultPolicy{}).Guard(), (&guard.RunCeiling{}).Guard())

	run, _ := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"command": "python -m pytest -q"}`)})
	read, _ := fn(ctx, &harness.ToolCall{ID: "call_2", Name: "bash", Args: json.RawMessage(`{"command": "cat test.log"}`)})
	fmt.Println("run:", run.Bytes, "bytes, model copy", len(run.ModelText()), "bytes,", run.Cuts[0].Kind, run.Cuts[0].Locator)
	fmt.Println("read:", read.Bytes, "bytes, model copy", len(read.ModelText()), "bytes, cuts", len(read.Cuts))
	// Output:
	// run: 13532 bytes, model copy 2001 bytes, spilled .harness/spill/c_demo/call_1-bash.txt
	// read: 13532 bytes, model copy 13532 bytes, cuts 0
}

// TestRunCeilingCutsTheModelCopy checks that the run ceiling cuts what the
// guards inside it left, not the full payload: a run whose model copy a
// guard inside already shortened (Collapse's markers for lines the model
// sees) stays as that guard left it.
func TestRunCeilingCutsTheModelCopy(t *testing.T) {
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 1, Workspace: t.TempDir()})
	const short = "[lines 1-400: the same as the result of call_0]\n=== 1 failed, 199 passed ===\n"
	shortened := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err == nil {
				res.Model = []harness.Part{harness.TextPart(short)}
				res.Cuts = append(res.Cuts, harness.Cut{Kind: harness.CutDeduped, By: guard.CollapseName, Of: "call_0"})
			}
			return res, err
		}
	}
	fn := harness.Chain(lines(400), (&guard.RunCeiling{}).Guard(), shortened)
	res, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"command": "pytest -q"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ModelText() != short || len(res.Cuts) != 1 {
		t.Fatalf("the run ceiling redid the inner guard's copy: cuts %v, model copy:\n%s", res.Cuts, res.ModelText())
	}
	if len(res.FullText()) <= guard.DefaultRunCeilingBytes {
		t.Fatal("the test's payload must be over the run ceiling")
	}
}

// TestRunCeilingMinBytes checks that an output a little over the ceiling
// stays whole: only a model copy over MinBytes is cut.
func TestRunCeilingMinBytes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		out, min  int
		wantWhole bool
	}{
		{"under the ceiling", 1500, 0, true},
		{"over the ceiling, under the default MinBytes", 2900, 0, true},
		{"over the default MinBytes", 3300, 0, false},
		{"MinBytes set higher", 3300, 8 << 10, true},
		{"MinBytes below the ceiling is the ceiling", 2200, 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 1, Workspace: t.TempDir()})
			out := strings.Repeat("tests/test_mod.py::test_case FAILED\n", tc.out/36+1)[:tc.out]
			tool := func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
				return harness.TextResult(out), nil
			}
			fn := harness.Chain(tool, (&guard.RunCeiling{MinBytes: tc.min}).Guard())
			res, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"command": "pytest"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if whole := res.ModelText() == out && len(res.Cuts) == 0; whole != tc.wantWhole {
				t.Fatalf("whole = %v, want %v (model copy %d bytes, cuts %v)", whole, tc.wantWhole, len(res.ModelText()), res.Cuts)
			}
			if !tc.wantWhole && len(res.ModelText()) > guard.DefaultRunCeilingBytes {
				t.Fatalf("cut to %d bytes, over the ceiling", len(res.ModelText()))
			}
		})
	}
}

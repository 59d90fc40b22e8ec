package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentharness/harness"
)

// lockLines is a lock file of n packages, one of them zod, one line each.
func lockLines(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("pkg%04d", i)
		if i == n/2 {
			name = "zod"
		}
		fmt.Fprintf(&b, "  \"node_modules/%s\": {\"version\": \"1.%d.0\", \"integrity\": \"sha512-%064x\"},\n", name, i, i*7919)
	}
	return b.String()
}

func TestRelevanceCeiling(t *testing.T) {
	ws := t.TempDir()
	lock := lockLines(1200)
	conv := harness.NewConversation("c")
	conv.Turns = []*harness.Turn{{Index: 1, Input: "Which version of zod does the project lock?",
		Rounds: []*harness.Round{{Index: 1, Assistant: harness.Message{Parts: []harness.Part{harness.TextPart("Listing the project first.")}}}}}}
	ctx := harness.WithCallInfo(context.Background(), harness.CallInfo{Conversation: "c", Turn: 1, Round: 2, Workspace: ws, Transcript: conv})
	fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(lock), nil
	}, relevanceCeiling(24<<10, 1536, 1536, 1024))
	res, err := fn(ctx, &harness.ToolCall{ID: "call_1", Name: "read_file", Args: []byte(`{"path":"package-lock.json"}`)})
	if err != nil {
		t.Fatal(err)
	}
	got := res.ModelText()
	if res.FullText() != lock || len(got) > 4<<10+600 {
		t.Fatalf("model copy is %d bytes", len(got))
	}
	if !strings.Contains(got, `"node_modules/zod"`) || !strings.Contains(got, "(the middle ones match: ") || !strings.Contains(got, "zod)") {
		t.Errorf("the zod line is not in the preview:\n%s", got)
	}
	if !strings.HasPrefix(got, lock[:100]) || !strings.Contains(got, "… (lines ") || !strings.Contains(got, "lines 1-") {
		t.Errorf("head or gap markers missing:\n%s", got)
	}
	if len(res.Cuts) != 1 || res.Cuts[0].Kind != harness.CutSpilled || res.Cuts[0].By != "relevance" {
		t.Fatalf("cuts %+v", res.Cuts)
	}
	saved, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(res.Cuts[0].Locator)))
	if err != nil || string(saved) != lock || !strings.Contains(got, res.Cuts[0].Locator) {
		t.Errorf("spill file: %v", err)
	}
	// A result under the ceiling passes through.
	small, _ := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult("short"), nil
	}, relevanceCeiling(24<<10, 1536, 1536, 1024))(ctx, &harness.ToolCall{ID: "call_2", Name: "read_file"})
	if small.Cut() {
		t.Error("a small result was cut")
	}
}

// FuzzRelevancePreview checks the preview of any text: it stays within
// its budget plus the marker, ends with the marker, and every line it
// shows is a line of the text, in order.
func FuzzRelevancePreview(f *testing.F) {
	f.Add(lockLines(400), "zod version", 1536, 1536, 1024)
	f.Add("no newline at all "+strings.Repeat("x", 9000), "x", 100, 100, 100)
	f.Add("\n\n\n", "", 0, 0, 0)
	f.Add("a\xff\xfeb\nzod\nc\n", "zod", 1, 2, 1)
	f.Fuzz(func(t *testing.T, text, query string, head, mid, tail int) {
		head, mid, tail = abs(head)%8192, abs(mid)%8192, abs(tail)%8192
		q := map[string]float64{}
		for _, w := range terms(query) {
			q[w] = 2
		}
		out := relevancePreview("tool", text, q, "spill/x.txt", true, head, mid, tail)
		i := strings.LastIndex(out, "[harness: tool output is ")
		if i < 0 || !strings.HasSuffix(out, "]") {
			t.Fatalf("no marker: %q", out)
		}
		body := out[:i]
		lines := strings.SplitAfter(text, "\n")
		next := 0
		shown := 0
		for _, l := range strings.SplitAfter(body, "\n") {
			if l == "" || strings.HasPrefix(l, "… (lines ") {
				continue
			}
			found := false
			for next < len(lines) {
				cand := lines[next]
				next++
				if cand == l || cand+"\n" == l {
					found, shown = true, shown+len(cand)
					break
				}
			}
			if !found {
				t.Fatalf("shown line %q is not a line of the text in order", l)
			}
		}
		if shown > head+mid+tail {
			t.Fatalf("%d bytes of text shown, budget %d", shown, head+mid+tail)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}

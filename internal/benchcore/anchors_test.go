package benchcore

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

func TestAnchorCuts(t *testing.T) {
	text := strings.Repeat("line of build output\n", 10_000) + "error: the verdict at the end\n"
	for _, tc := range []struct {
		name      string
		cut       func(string) string
		max       int
		keepsTail bool
		marker    string
	}{
		{"codex", codexCut, 10_100, true, "tokens truncated…"},
		{"swe-agent", sweAgentCut, 100_400, false, "<response clipped>"},
		{"openhands", openHandsCut, 30_100, true, "Observation truncated"},
		{"crush", crushShellCut, 30_100, true, "lines truncated"},
		{"crush-view", crushViewCut, 5_000, false, "beyond line 200"},
	} {
		got := tc.cut(text)
		if len(got) > tc.max || !strings.Contains(got, tc.marker) || strings.Contains(got, "the verdict") != tc.keepsTail || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, marker %v, tail %v", tc.name, len(got), strings.Contains(got, tc.marker), strings.Contains(got, "the verdict"))
		}
	}
}

// FuzzAnchorCuts runs every trimming function of the anchors on any text
// over its threshold: no panic, valid UTF-8 out, a marker always present.
func FuzzAnchorCuts(f *testing.F) {
	f.Add("x", 1)
	f.Add("é\xff\n", 40_000)
	f.Add("ab\n", 10_001)
	f.Add("λ", 30_001)
	f.Add("line\n", 150_000)
	f.Fuzz(func(t *testing.T, unit string, n int) {
		if unit == "" || n <= 0 || n > 200_000 {
			return
		}
		// n sets the output size, from tiny to well over every anchor's cap.
		text := strings.Repeat(unit, 1+n/len(unit))
		for _, a := range []struct {
			name  string
			cut   func(string) string
			limit int // in the unit the anchor counts
			size  func(string) int
		}{
			{"codex", codexCut, 10_000, func(s string) int { return len(s) }},
			{"swe", sweAgentCut, 100_000, utf8.RuneCountInString},
			{"oh", openHandsCut, 30_000, utf8.RuneCountInString},
			{"crush", crushShellCut, 30_000, utf8.RuneCountInString},
		} {
			got := a.cut(text)
			if a.size(text) <= a.limit {
				if got != text {
					t.Fatalf("%s: cut an output within its limit (%d ≤ %d)", a.name, a.size(text), a.limit)
				}
				continue
			}
			if !utf8.ValidString(got) && utf8.ValidString(text) {
				t.Fatalf("%s: invalid UTF-8", a.name)
			}
			if a.size(got) > a.limit+400 {
				t.Fatalf("%s: %d over a limit of %d", a.name, a.size(got), a.limit)
			}
		}
		if strings.Count(text, "\n") > 200 {
			if got := crushViewCut(text); !strings.Contains(got, "offset") {
				t.Fatal("crush view: no marker")
			}
		}
	})
}

// FuzzReadRange checks the parser of read calls on any arguments.
func FuzzReadRange(f *testing.F) {
	f.Add("bash", `{"command":"cat -n a.py | sed -n '10,20p'"}`)
	f.Add("read_file", `{"path":"a","offset":"5","limit":3}`)
	f.Add("bash", `{"command":"head -n 5 x"}`)
	f.Fuzz(func(t *testing.T, tool, args string) {
		p, from, to, ok := readRange(harness.ToolCall{Name: tool, Args: []byte(args)})
		if ok && (p == "" && IsShell(tool) || from > to && to >= 0 && from >= 0 && IsRead(tool) && to < from) {
			t.Fatalf("range %q %d-%d", p, from, to)
		}
	})
}

func TestReadRange(t *testing.T) {
	for _, tc := range []struct {
		tool, args, path string
		from, to         int
		ok               bool
	}{
		{"bash", `{"command":"cat -n pydicom/jsonrep.py | sed -n '60,110p'"}`, "pydicom/jsonrep.py", 60, 110, true},
		{"bash", `{"command":"sed -n '142,254p' src/L003.py"}`, "src/L003.py", 142, 254, true},
		{"bash", `{"command":"cat -n pydicom/jsonrep.py | head -250"}`, "pydicom/jsonrep.py", 1, 250, true},
		{"read_file", `{"path":"a.go","offset":"100","limit":"21"}`, "a.go", 100, 120, true},
		{"bash", `{"command":"python x.py"}`, "", 0, 0, false},
	} {
		p, from, to, ok := readRange(harness.ToolCall{Name: tc.tool, Args: []byte(tc.args)})
		if p != tc.path || ok != tc.ok || (ok && (from != tc.from || to != tc.to)) {
			t.Errorf("%s: got %q %d-%d %v", tc.args, p, from, to, ok)
		}
	}
}

func TestClearToolUsesAndLastN(t *testing.T) {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "go"}
	conv.Turns = []*harness.Turn{turn}
	for i := 0; i < 8; i++ {
		id := string(rune('a' + i))
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: []byte(`{}`)}}},
			Results:   []*harness.ToolResult{{CallID: id, Tool: "bash", Parts: []harness.Part{harness.TextPart(strings.Repeat("word ", 20_000))}}}})
	}
	bpe := counter(t)
	count := func(p harness.ViewPolicy) (cleared int) {
		v := harness.BuildView(conv, turn, "sys", nil, false)
		if err := p.ApplyView(context.Background(), v); err != nil {
			t.Fatal(err)
		}
		for _, o := range v.Origins {
			if len(o.Cuts) > 0 {
				cleared++
			}
		}
		return cleared
	}
	if n := count(clearToolUses(bpe, 100_000, 3, 10_000)); n != 5 {
		t.Errorf("clear_tool_uses cleared %d results, want 5 (8 − keep 3)", n)
	}
	if n := count(clearToolUses(bpe, 1_000_000, 3, 10_000)); n != 0 {
		t.Errorf("cleared %d under the trigger", n)
	}
	if n := count(clearToolUses(bpe, 100_000, 3, 10_000_000)); n != 0 {
		t.Errorf("cleared %d although clear_at_least cannot be met", n)
	}
	if n := count(lastNObservations(5)); n != 3 {
		t.Errorf("last-5 cleared %d", n)
	}
	if n := count(observationMasking(4)); n != 6 {
		t.Errorf("masking outside 4 messages cleared %d", n)
	}
}

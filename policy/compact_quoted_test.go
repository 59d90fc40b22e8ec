package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

func TestQuotedLines(t *testing.T) {
	text := "alpha\nbeta fooBar1 x\ngamma\ndelta\nepsilon\nzeta\neta\ntheta baz_qux\niota"
	for _, tc := range []struct {
		name   string
		text   string
		quoted []string
		want   []int
	}{
		{"nothing quoted", text, nil, nil},
		{"no line holds it", text, []string{"absent_1"}, nil},
		{"one line", text, []string{"fooBar1"}, []int{1}},
		{"two lines", text, []string{"baz_qux", "fooBar1"}, []int{1, 7}},
		{"a word inside a longer one is not quoted", text, []string{"fooBar"}, nil},
		{"a final newline adds no line", "x\nfooBar1\n", []string{"fooBar1"}, []int{1}},
		{"no text", "", []string{"fooBar1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := map[string]bool{}
			for _, w := range tc.quoted {
				q[w] = true
			}
			if got := quotedLines(tc.text, q); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// quotedRule is a rule whose cleared results keep, below the placeholder,
// the lines the agent quoted from them, each after its number.
func quotedRule() ClearRule {
	return ClearRule{Name: "quoted", Clear: func(c ClearCandidate) (bool, string) {
		lines := c.Quoted()
		if len(lines) == 0 {
			return true, ""
		}
		all := strings.SplitAfter(c.Result.ModelText(), "\n")
		var b strings.Builder
		fmt.Fprintf(&b, "[cleared to save context: %s; below are the lines of it you quoted. To see all of it, %s.]\n", c.About, c.Back)
		for _, i := range lines {
			fmt.Fprintf(&b, "%d: %s", i+1, all[i])
		}
		return true, b.String()
	}}
}

// readRound is round i of a hand-built transcript: the assistant says
// text and, with args, calls read once with them and gets a result.
func readRound(i int, text, args string) *harness.Round {
	m := harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}
	r := &harness.Round{Index: i, Assistant: m}
	if args != "" {
		r.Assistant.ToolCalls = []harness.ToolCall{{ID: fmt.Sprint("c", i), Name: "read", Args: []byte(args)}}
		r.Results = []*harness.ToolResult{harness.TextResult("x")}
	}
	return r
}

func TestQuotedByReadsTheAgentsMessagesAfterTheResultUpToTheMarksKeptRounds(t *testing.T) {
	round := readRound
	conv := harness.NewConversation("q")
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{
		round(1, "look for parse_line", `{"pattern":"parse_line"}`),
		round(2, "parse_line calls split_field and the word splitting", `{"path":"src/Field2.go"}`),
		round(3, "then emit_row", `{"path":"a"}`),
		round(4, "an answer without calls, quoting answer_word", ""),
	}}, {Index: 2, Rounds: []*harness.Round{round(1, "later_word only", `{"path":"b"}`)}}}
	for _, tc := range []struct {
		name      string
		pos, mark compactPos
		after     int
		want      []string
	}{
		{"no round after the mark", compactPos{1, 1}, compactPos{1, 1}, 0, nil},
		{"one round: its own pattern is not a quote, a path is", compactPos{1, 1}, compactPos{1, 1}, 1, []string{"Field2", "split_field"}},
		{"rounds up to the mark and two after it", compactPos{1, 1}, compactPos{1, 2}, 2, []string{"Field2", "answer_word", "emit_row", "later_word", "split_field"}},
		{"nothing after the last kept round", compactPos{1, 2}, compactPos{1, 2}, 1, []string{"emit_row"}},
		{"rounds without results are read, not counted", compactPos{1, 2}, compactPos{1, 2}, 2, []string{"answer_word", "emit_row", "later_word"}},
		{"a mark before the result", compactPos{1, 3}, compactPos{1, 2}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(quotedBy(conv, tc.pos, tc.mark, tc.after, nil)))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHorizonOfIsTheFirstMarkCoveringTheResult(t *testing.T) {
	conv := harness.NewConversation("h")
	pending := compactPos{9, 9}
	if got := horizonOf(conv, compactPos{1, 2}, pending); got != pending {
		t.Fatalf("no mark: %v, want the pending %v", got, pending)
	}
	conv.Notes = []*harness.Note{{ClearTurn: 1, ClearRound: 4}, {ClearTurn: 2, ClearRound: 1}, {Text: "summary", After: 1}}
	for _, tc := range []struct{ pos, want compactPos }{
		{compactPos{1, 2}, compactPos{1, 4}},
		{compactPos{1, 4}, compactPos{1, 4}},
		{compactPos{1, 5}, compactPos{2, 1}},
		{compactPos{2, 2}, pending},
	} {
		if got := horizonOf(conv, tc.pos, pending); got != tc.want {
			t.Fatalf("horizon of %v = %v, want %v", tc.pos, got, tc.want)
		}
	}
}

// quotedRun runs one turn of n reads of 60-line files; each step quotes
// one identifier of the result before it (line 7 of it).
func quotedRun(t *testing.T, n int, p *CompactPolicy) []*harness.Request {
	t.Helper()
	reqs, _, _, _ := activeRun(t, n, 0, p)
	return reqs
}

func callIDOf(i int) string { return fmt.Sprintf("call%03d", i) }

// A rule's text, read from what the agent quoted, is the same in every
// view from the clear on.
func TestCompactRuleTextIsIdenticalInEveryLaterView(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	reqs := quotedRun(t, 40, &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: c, Rule: quotedRule()})
	// The text each cleared call shows, from the request that cleared it on.
	shown := map[string]string{}
	digests := 0
	for _, req := range reqs {
		for _, m := range req.Messages {
			if m.Role != harness.RoleTool || !strings.HasPrefix(m.Text(), "[cleared") {
				continue
			}
			text := m.Text()
			if prev, ok := shown[m.ToolCallID]; ok && prev != text {
				t.Fatalf("call %s shown two ways in later views:\n%q\n%q", m.ToolCallID, prev, text)
			}
			shown[m.ToolCallID] = text
			if !strings.Contains(text, "lines of it you quoted") {
				continue
			}
			digests++
			if want := fmt.Sprintf("field_%s_7 =", m.ToolCallID); !strings.Contains(text, want) {
				t.Fatalf("digest of %s lacks the quoted line %q:\n%s", m.ToolCallID, want, text)
			}
			if !strings.Contains(text, `call recall with {"call_id":"`+m.ToolCallID+`"}`) || !strings.Contains(text, "\n7: ") {
				t.Fatalf("digest of %s does not say how to get the rest or which lines it keeps:\n%s", m.ToolCallID, text)
			}
			if strings.Contains(text, fmt.Sprintf("field_%s_12 =", m.ToolCallID)) {
				t.Fatalf("digest of %s keeps a line 5 away from the quote:\n%s", m.ToolCallID, text)
			}
		}
	}
	if len(shown) == 0 || digests == 0 {
		t.Fatalf("%d results cleared, %d with a digest: the run should clear with digests", len(shown), digests)
	}
}

func TestCompactDefaultRuleShowsOnlyThePlaceholder(t *testing.T) {
	reqs := quotedRun(t, 40, &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: tokens.NewCache(o200k(t), nil)})
	cleared := 0
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == harness.RoleTool && strings.HasPrefix(m.Text(), "[cleared") {
			cleared++
			if strings.Contains(m.Text(), "\n") {
				t.Fatalf("a placeholder of more than one line under the default rule: %q", m.Text())
			}
		}
	}
	if cleared == 0 {
		t.Fatal("nothing cleared")
	}
}

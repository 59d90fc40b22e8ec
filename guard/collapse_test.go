package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// fileLines returns n numbered lines of a source file, as cat -n shows it.
func fileLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		switch {
		case i%10 == 9:
			out[i] = fmt.Sprintf("%6d\t", i+1) // a blank line
		case i%10 == 5:
			out[i] = fmt.Sprintf("%6d\t}", i+1)
		default:
			out[i] = fmt.Sprintf("%6d\t\tvalue%d := compute(ctx, %d)", i+1, i, i*7)
		}
	}
	return out
}

func lineRange(lines []string, from, to int) string { return strings.Join(lines[from-1:to], "\n") }

// convWith returns a conversation whose first turn holds results, one round
// each, and a CallInfo for a call in the next round.
func convWith(results ...*harness.ToolResult) (*harness.Conversation, harness.CallInfo) {
	conv := harness.NewConversation("c")
	turn := &harness.Turn{Index: 1, Input: "read the file"}
	for i, r := range results {
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: i + 1,
			Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: r.CallID, Name: r.Tool}}},
			Results:   []*harness.ToolResult{r}})
	}
	conv.Turns = []*harness.Turn{turn}
	return conv, harness.CallInfo{Conversation: "c", Turn: 1, Round: len(results) + 1, Transcript: conv}
}

func textResult(id, text string) *harness.ToolResult {
	return &harness.ToolResult{CallID: id, Tool: "bash", Parts: []harness.Part{harness.TextPart(text)}}
}

// runCollapse runs one call returning out through a Collapse guard.
func runCollapse(t *testing.T, c *Collapse, info harness.CallInfo, id, out string, obs harness.Observer) *harness.ToolResult {
	t.Helper()
	fn := harness.Chain(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(out), nil
	}, c.Guard())
	ctx := harness.WithCallInfo(context.Background(), info)
	if obs != nil {
		ctx = harness.WithObserver(ctx, obs)
	}
	res, err := fn(ctx, &harness.ToolCall{ID: id, Name: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var markerRE = regexp.MustCompile(`^\[collapsed: lines (\d+)-(\d+) of this output \((\d+) lines, (\d+) chars\) are lines (\d+)-(\d+) of the output of call (\S+) shown earlier; recall call (\S+) for this output in full\]$`)

// expand rebuilds the full output from a collapsed model copy and the
// sources' model copies, checking each marker's numbers on the way.
func expand(t testing.TB, model string, sources map[string]string, self string) string {
	t.Helper()
	split := map[string][]string{}
	for id, src := range sources {
		split[id] = strings.Split(src, "\n")
	}
	var out []string
	for _, l := range strings.Split(model, "\n") {
		m := markerRE.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "[collapsed:") {
				t.Fatalf("malformed marker %q", l)
			}
			out = append(out, l)
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		srcLines, ok := split[m[7]]
		if !ok || m[8] != self {
			t.Fatalf("marker names call %s (self %s): %q", m[7], m[8], l)
		}
		if n(1) != len(out)+1 || n(2)-n(1)+1 != n(3) || n(6)-n(5)+1 != n(3) || n(6) > len(srcLines) {
			t.Fatalf("marker numbers do not add up: %q (at line %d)", l, len(out)+1)
		}
		block := srcLines[n(5)-1 : n(6)]
		chars := 0
		for _, b := range block {
			chars += utf8.RuneCountInString(b) + 1
		}
		if chars != n(4) {
			t.Fatalf("marker says %d chars, block has %d", n(4), chars)
		}
		out = append(out, block...)
	}
	return strings.Join(out, "\n")
}

func TestCollapseOverlappingRead(t *testing.T) {
	file := fileLines(60)
	first := textResult("call_a", lineRange(file, 1, 30))
	_, info := convWith(first)
	var (
		mu     sync.Mutex
		events []harness.Event
	)
	second := lineRange(file, 11, 40) // lines 11-30 were shown by call_a
	res := runCollapse(t, nil, info, "call_b", second, func(e harness.Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	got := res.ModelText()
	want := "[collapsed: lines 1-20 of this output (20 lines, "
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "are lines 11-30 of the output of call call_a shown earlier; recall call call_b for this output in full]\n"+file[30]) {
		t.Fatalf("model copy:\n%s", got)
	}
	if res.FullText() != second {
		t.Error("the stored output changed")
	}
	if len(res.Cuts) != 1 || !reflect.DeepEqual(res.Cuts[0], harness.Cut{Kind: harness.CutDeduped, By: CollapseName, BytesIn: len(second), BytesOut: len(got), Locator: "call:call_b", Of: "call_a", Refs: []string{"call_a"}}) {
		t.Errorf("cuts %+v", res.Cuts)
	}
	if expand(t, got, map[string]string{"call_a": first.ModelText()}, "call_b") != second {
		t.Error("the markers do not expand to the output")
	}
	if len(events) != 1 || events[0].Policy != CollapseName || events[0].Data["lines"] != 20 {
		t.Errorf("events %+v", events)
	}
}

func TestCollapseLeavesAlone(t *testing.T) {
	file := fileLines(80)
	shown := textResult("call_a", lineRange(file, 1, 40))
	for _, tc := range []struct {
		name string
		c    *Collapse
		prep func(conv *harness.Conversation)
		out  string
	}{
		{name: "fewer lines than MinLines repeat", out: lineRange(file, 35, 60)},
		{name: "MinLines raised", c: &Collapse{MinLines: 25}, out: lineRange(file, 21, 60)},
		{name: "another tool", c: &Collapse{Tools: []string{"read_file"}}, out: lineRange(file, 1, 40)},
		{name: "the source was cleared by compaction", out: lineRange(file, 1, 40), prep: func(conv *harness.Conversation) {
			conv.Notes = append(conv.Notes, &harness.Note{Text: "cleared", ClearTurn: 1, ClearRound: 1})
		}},
		{name: "the source's turn was summarised", out: lineRange(file, 1, 40), prep: func(conv *harness.Conversation) {
			conv.Notes = append(conv.Notes, &harness.Note{Text: "summary", After: 1})
		}},
		{name: "the source was trimmed", out: lineRange(file, 1, 40), prep: func(conv *harness.Conversation) {
			conv.Turns[0].Rounds[0].Results[0].Cuts = []harness.Cut{{Kind: harness.CutTrimmed}}
		}},
		{name: "short repeated lines only", out: strings.Repeat("}\n\n{\n", 30)},
		{name: "too large to read", c: &Collapse{MaxBytes: 100}, out: lineRange(file, 1, 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := *shown
			conv, info := convWith(&src)
			if tc.prep != nil {
				tc.prep(conv)
			}
			res := runCollapse(t, tc.c, info, "call_b", tc.out, nil)
			if len(res.Cuts) > 0 || res.ModelText() != tc.out {
				t.Errorf("collapsed:\n%s", res.ModelText())
			}
		})
	}
}

func TestCollapseSkipsCutAndNonText(t *testing.T) {
	file := fileLines(40)
	_, info := convWith(textResult("call_a", lineRange(file, 1, 40)))
	ctx := harness.WithCallInfo(context.Background(), info)
	for name, res := range map[string]*harness.ToolResult{
		"already cut": {Parts: []harness.Part{harness.TextPart(lineRange(file, 1, 40))}, Model: []harness.Part{harness.TextPart("x")}, Cuts: []harness.Cut{{Kind: harness.CutTruncated}}},
		"image":       {Parts: []harness.Part{harness.TextPart(lineRange(file, 1, 40)), harness.ImagePart("image/png", []byte{1, 2})}},
		"json":        {Parts: []harness.Part{harness.JSONPart([]byte(`{"a":1}`))}},
	} {
		want := res.ModelText()
		got, err := (&Collapse{}).Guard()(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) { return res, nil })(ctx, &harness.ToolCall{ID: "b", Name: "bash"})
		if err != nil || got.ModelText() != want || len(got.Cuts) > 1 {
			t.Errorf("%s: %v %q", name, err, got.ModelText())
		}
	}
	// No call info, or no transcript: nothing to compare with.
	res, _ := (&Collapse{}).Guard()(func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(lineRange(file, 1, 40)), nil
	})(context.Background(), &harness.ToolCall{ID: "b"})
	if len(res.Cuts) > 0 {
		t.Error("collapsed without a transcript")
	}
}

// TestCollapseRerunAndSeveralSources: a re-run test whose output repeats
// most of the previous run, and a read that spans two earlier reads.
func TestCollapseRerunAndSeveralSources(t *testing.T) {
	file := fileLines(100)
	a := textResult("call_a", lineRange(file, 1, 30))
	b := textResult("call_b", lineRange(file, 31, 60))
	_, info := convWith(a, b)
	out := lineRange(file, 21, 50) + "\nFAIL: TestSomething (0.01s)"
	res := runCollapse(t, nil, info, "call_c", out, nil)
	got := res.ModelText()
	if strings.Count(got, "[collapsed:") != 2 || !strings.Contains(got, "of call call_a") || !strings.Contains(got, "of call call_b") || !strings.HasSuffix(got, "FAIL: TestSomething (0.01s)") {
		t.Fatalf("model copy:\n%s", got)
	}
	if expand(t, got, map[string]string{"call_a": a.ModelText(), "call_b": b.ModelText()}, "call_c") != out {
		t.Error("the markers do not expand to the output")
	}
	if len(res.Cuts) != 1 || res.Cuts[0].Of != "call_a" || !reflect.DeepEqual(res.Cuts[0].Refs, []string{"call_a", "call_b"}) {
		t.Errorf("the cut does not name both sources: %+v", res.Cuts)
	}
}

// TestCollapseThroughAgent runs a real agent whose tool reads overlapping
// line ranges: the second read reaches the model collapsed, the transcript
// keeps it whole.
func TestCollapseThroughAgent(t *testing.T) {
	file := fileLines(120)
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read_lines", Description: "read lines", Risk: harness.ReadOnly,
			InputSchema: []byte(`{"type":"object","properties":{"from":{"type":"integer"},"to":{"type":"integer"}}}`)},
		Func: func(_ context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			var a struct{ From, To int }
			if err := json.Unmarshal(call.Args, &a); err != nil {
				return nil, err
			}
			return harness.TextResult(lineRange(file, a.From, a.To)), nil
		},
	}
	step := 0
	var lastReq *harness.Request
	model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
		step++
		lastReq = req
		switch step {
		case 1:
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "r1", Name: "read_lines", Args: []byte(`{"from":1,"to":60}`)}}}}, nil
		case 2:
			return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{{ID: "r2", Name: "read_lines", Args: []byte(`{"from":41,"to":100}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{read},
		Guards: []harness.Guard{(&ResultPolicy{}).Guard(), (&Collapse{}).Guard()}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	if _, err := agent.Run(context.Background(), conv, "read it"); err != nil {
		t.Fatal(err)
	}
	r2 := conv.FindResult("r2")
	if r2.FullText() != lineRange(file, 41, 100) || !strings.HasPrefix(r2.ModelText(), "[collapsed: lines 1-20 of this output (20 lines") {
		t.Fatalf("r2 model copy:\n%.300s", r2.ModelText())
	}
	last := lastReq.Messages[len(lastReq.Messages)-1]
	if last.Role != harness.RoleTool || !strings.HasPrefix(last.Text(), "[collapsed:") {
		t.Errorf("the request shows %q", last.Text())
	}
}

func FuzzCollapse(f *testing.F) {
	file := strings.Join(fileLines(40), "\n")
	f.Add(file, strings.Join(fileLines(60)[10:50], "\n"), 8)
	f.Add("aaaaaaaaaa\naaaaaaaaaa\naaaaaaaaaa", "aaaaaaaaaa\naaaaaaaaaa\naaaaaaaaaa\naaaaaaaaaa", 1)
	f.Add("", "", 0)
	f.Add("x\xff\xfe invalid utf-8 line here\n"+file, "x\xff\xfe invalid utf-8 line here\n"+file, 2)
	f.Add("[collapsed: lines 1-2 of this output]\nline number one\nline number two", "line number one\nline number two\n[collapsed: lines 1-2 of this output]", 1)
	f.Fuzz(func(t *testing.T, earlier, out string, minLines int) {
		minLines = minLines%20 + 1
		if minLines < 1 {
			minLines += 20
		}
		src := textResult("call_a", earlier)
		_, info := convWith(src)
		res := runCollapse(t, &Collapse{MinLines: minLines}, info, "call_b", out, nil)
		if res.FullText() != out {
			t.Fatal("the stored output changed")
		}
		got := res.ModelText()
		if len(res.Cuts) == 0 {
			if got != out {
				t.Fatal("uncut copy differs")
			}
			return
		}
		if len(got) >= len(out) {
			t.Fatalf("collapsing grew the copy: %d → %d", len(out), len(got))
		}
		if strings.HasPrefix(out, "[collapsed:") || strings.Contains(out, "\n[collapsed:") {
			return // the output's own lines look like markers: expand cannot tell them apart
		}
		if expand(t, got, map[string]string{"call_a": earlier}, "call_b") != out {
			t.Fatal("the markers do not expand to the output")
		}
	})
}

package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// settleConv is one turn of n rounds; round r runs one call whose result
// is a numbered log of lines lines (name it with cmd).
func settleConv(n, lines int, cmd func(r int) string) *harness.Conversation {
	conv := harness.NewConversation("settle")
	turn := &harness.Turn{Index: 1, Input: "fix the bug"}
	for r := 1; r <= n; r++ {
		id := fmt.Sprintf("call_%d", r)
		args, _ := json.Marshal(map[string]string{"command": cmd(r)})
		var b strings.Builder
		for l := 1; l <= lines; l++ {
			fmt.Fprintf(&b, "round %d line %d: value_%d_%d is computed here\n", r, l, r, l)
		}
		res := &harness.ToolResult{CallID: id, Tool: "bash", Parts: []harness.Part{harness.TextPart(b.String())}}
		res.Bytes = res.PayloadSize()
		turn.Rounds = append(turn.Rounds, &harness.Round{Index: r,
			Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(fmt.Sprintf("step %d", r))},
				ToolCalls: []harness.ToolCall{{ID: id, Name: "bash", Args: args}}},
			Results: []*harness.ToolResult{res}})
	}
	conv.Turns = append(conv.Turns, turn)
	return conv
}

func runCmd(r int) string { return fmt.Sprintf("python run_%d.py", r) }

// settledView builds the view of the request after the first `rounds`
// rounds of conv and applies s.
func settledView(t *testing.T, s *Settle, conv *harness.Conversation, rounds int) *harness.View {
	t.Helper()
	c := *conv
	turn := *conv.Turns[0]
	turn.Rounds = turn.Rounds[:rounds]
	c.Turns = []*harness.Turn{&turn}
	v := harness.BuildView(&c, &turn, "sys", nil, false)
	if err := s.ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

func toolMessages(v *harness.View) map[string]int {
	out := map[string]int{}
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool {
			out[m.ToolCallID] = i
		}
	}
	return out
}

func TestSettleShowsWholeOnceThenDigest(t *testing.T) {
	conv := settleConv(3, 200, runCmd)
	s := &Settle{Counter: o200k(t)}
	full := conv.Turns[0].Rounds[0].Results[0].ModelText()

	// Request 2 shows round 1's result for the first time: whole.
	v := settledView(t, s, conv, 1)
	if got := v.Messages[toolMessages(v)["call_1"]].Text(); got != full {
		t.Fatal("the newest result was settled before the model saw it")
	}
	// Request 3: the model has replied to it once, so it is settled; the
	// newest result stays whole.
	v = settledView(t, s, conv, 2)
	at := toolMessages(v)
	got := v.Messages[at["call_1"]].Text()
	if len(got) >= len(full)/4 || !strings.HasPrefix(full, got[:100]) || !strings.HasSuffix(full, got[len(got)-100:]) {
		t.Fatalf("settled copy (%d of %d bytes) is not a head + tail digest:\n%s", len(got), len(full), got)
	}
	for _, want := range []string{"[settled:", "shown to you whole once", `call recall with {"call_id":"call_1"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("digest lacks %q:\n%s", want, got)
		}
	}
	if v.Messages[at["call_2"]].Text() != conv.Turns[0].Rounds[1].Results[0].ModelText() {
		t.Error("the newest result was settled")
	}
	cuts := v.Origins[at["call_1"]].Cuts
	if len(cuts) != 1 || cuts[0].Kind != harness.CutTrimmed || cuts[0].By != SettleName || cuts[0].Locator != "call:call_1" ||
		cuts[0].BytesIn != len(full) || cuts[0].BytesOut != len(got) {
		t.Errorf("cut = %+v", cuts)
	}
	if conv.Turns[0].Rounds[0].Results[0].ModelText() != full || len(conv.Turns[0].Rounds[0].Results[0].Cuts) != 0 {
		t.Error("the stored result changed")
	}
}

// TestSettleBreaksTheCacheOnlyAtTheSettledResult checks the economics the
// policy rests on: between two consecutive requests, the only message
// that changes is the result being settled (it is the newest of the
// previous request's cached prefix), and a settled copy never changes
// again.
func TestSettleBreaksTheCacheOnlyAtTheSettledResult(t *testing.T) {
	conv := settleConv(6, 120, runCmd)
	s := &Settle{Counter: o200k(t)}
	var prev *harness.View
	for n := 1; n <= 6; n++ {
		v := settledView(t, s, conv, n)
		if prev != nil {
			first := -1
			for i := range prev.Messages {
				if prev.Messages[i].Text() != v.Messages[i].Text() {
					first = i
					break
				}
			}
			want := -1
			if n >= 2 {
				want = toolMessages(prev)[fmt.Sprintf("call_%d", n-1)]
			}
			if first != want {
				t.Fatalf("request %d: first changed message %d, want %d (the result settled now)", n+1, first, want)
			}
			for i := first + 1; first >= 0 && i < len(prev.Messages); i++ {
				if prev.Messages[i].Text() != v.Messages[i].Text() {
					t.Fatalf("request %d: message %d changed after the settled one", n+1, i)
				}
			}
		}
		prev = v
	}
}

func TestSettleLeavesAlone(t *testing.T) {
	reads := func(r int) string {
		if r == 1 {
			return "cat src/main.py"
		}
		return runCmd(r)
	}
	cases := []struct {
		name  string
		conv  *harness.Conversation
		s     *Settle
		whole []string
	}{
		{"small results", settleConv(3, 20, runCmd), &Settle{}, []string{"call_1", "call_2"}},
		{"skipped file read", settleConv(3, 200, reads), &Settle{Skip: SkipFileReads}, []string{"call_1"}},
		{"not worth it", settleConv(3, 200, runCmd), &Settle{Remaining: func(int) float64 { return 0 }}, []string{"call_1", "call_2"}},
		{"waits for two replies", settleConv(3, 200, runCmd), &Settle{After: 2}, []string{"call_2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Counter = o200k(t)
			v := settledView(t, tc.s, tc.conv, 3)
			at := toolMessages(v)
			for _, id := range tc.whole {
				var r int
				fmt.Sscanf(id, "call_%d", &r)
				if v.Messages[at[id]].Text() != tc.conv.Turns[0].Rounds[r-1].Results[0].ModelText() {
					t.Errorf("%s was settled", id)
				}
			}
		})
	}
	// After 2: round 1 (two replies since) is settled when the run is
	// expected to last long enough to repay re-sending round 2.
	conv := settleConv(3, 200, runCmd)
	v := settledView(t, &Settle{After: 2, Counter: o200k(t)}, conv, 3)
	if strings.Contains(v.Messages[toolMessages(v)["call_1"]].Text(), "[settled:") {
		t.Error("After 2 settled although re-sending round 2 is not repaid in 4 requests")
	}
	v = settledView(t, &Settle{After: 2, Counter: o200k(t), Remaining: func(int) float64 { return 50 }}, conv, 3)
	if !strings.Contains(v.Messages[toolMessages(v)["call_1"]].Text(), "[settled:") {
		t.Error("After 2 did not settle the result replied to twice")
	}
}

func TestSettleKeepsLinesTheModelNamedNext(t *testing.T) {
	conv := settleConv(2, 200, runCmd)
	// The model's reply to round 1 names a value from its middle.
	conv.Turns[0].Rounds[1].Assistant.Parts = []harness.Part{harness.TextPart("value_1_117 looks wrong")}
	v := settledView(t, &Settle{Mid: 256, Counter: o200k(t)}, conv, 2)
	got := v.Messages[toolMessages(v)["call_1"]].Text()
	if !strings.Contains(got, "round 1 line 117: value_1_117 is computed here\n") || !strings.Contains(got, "the 1 lines below") {
		t.Fatalf("the line the model named is not kept:\n%s", got)
	}
	if strings.Contains(got, "value_1_116 ") {
		t.Error("a line the model did not name was kept")
	}
}

func TestSettleDigestSpillLocator(t *testing.T) {
	got := settleDigest(strings.Repeat("a line of output\n", 400), 64, 64, 0, nil, "c1", ".harness/spill/c1-bash.txt", false)
	if !strings.Contains(got, "read the file .harness/spill/c1-bash.txt.]") || strings.Contains(got, "recall") {
		t.Fatalf("marker without recall should name the spill file only:\n%s", got)
	}
}

// FuzzSettleDigest checks, for any output, that the digest is the output
// itself or shorter than it, begins with a prefix and ends with a suffix
// of it, always carries the marker with the way back, and is valid UTF-8
// when the output is.
func FuzzSettleDigest(f *testing.F) {
	f.Add(strings.Repeat("line\n", 500), 100, 200, 0, "word")
	f.Add(strings.Repeat("é", 3000), 7, 9, 50, "é")
	f.Add("short", 512, 768, 0, "")
	f.Add(strings.Repeat("x", 5000), 0, 0, 100, "x")
	f.Add("\xff\xfe"+strings.Repeat("ab\n", 2000), 3, 1, 64, "ab")
	f.Add(strings.Repeat("name_1 = 2\n", 800), 40, 40, 30, "name_1")
	f.Fuzz(func(t *testing.T, text string, head, tail, mid int, term string) {
		head, tail, mid = head%4096, tail%4096, mid%4096
		terms := map[string]bool{}
		settleTerms(term, terms)
		got := settleDigest(text, head, tail, mid, terms, "id1", "call:id1", true)
		if got == text {
			return
		}
		if len(got) >= len(text) {
			t.Fatalf("digest of %d bytes is %d bytes", len(text), len(got))
		}
		i := strings.Index(got, "[settled:")
		if i < 0 || !strings.Contains(got[i:], `call recall with {"call_id":"id1"}.]`) {
			t.Fatalf("no marker: %q", got)
		}
		if utf8.ValidString(text) {
			if !utf8.ValidString(got) {
				t.Fatal("invalid UTF-8 from valid input")
			}
			if h := strings.TrimSuffix(got[:i], "\n"); !strings.HasPrefix(text, h) {
				t.Fatalf("head %q is not a prefix", h)
			}
			end := strings.LastIndex(got, ".]\n")
			rest := got[end+3:]
			if j := strings.LastIndex(rest, "[…]\n"); j >= 0 {
				rest = rest[j+len("[…]\n"):]
			}
			if strings.Count(got[i:end], "below") == 0 && !strings.HasSuffix(text, rest) {
				t.Fatalf("tail %q is not a suffix", rest)
			}
		}
	})
}

// TestSettleThroughAgent runs Settle in an agent: the model is shown a
// command's output whole in the request after the call, as a digest from
// the request after its reply on, and the transcript keeps it whole.
func TestSettleThroughAgent(t *testing.T) {
	var log strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&log, "test_case_%03d ... ok\n", i)
	}
	log.WriteString("FAILED test_case_301: expected 2, got 3\n")
	run := harness.Tool{
		Spec: harness.ToolSpec{Name: "shell", Description: "run a command",
			InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		Func: func(context.Context, *harness.ToolCall) (*harness.ToolResult, error) {
			return harness.TextResult(log.String()), nil
		},
	}
	var reqs []*harness.Request
	model := harness.ModelFunc(func(_ context.Context, req *harness.Request) (*harness.Response, error) {
		reqs = append(reqs, req)
		if n := len(reqs); n <= 3 {
			id := fmt.Sprintf("c%d", n)
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("running the tests")},
				ToolCalls: []harness.ToolCall{{ID: id, Name: "shell", Args: []byte(`{"command":"go test ./..."}`)}}}}, nil
		}
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("done")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{run},
		Policies: []harness.ViewPolicy{&Settle{Counter: o200k(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	if _, err := agent.Run(context.Background(), conv, "run the tests"); err != nil {
		t.Fatal(err)
	}
	shown := func(req *harness.Request, id string) string {
		for _, m := range req.Messages {
			if m.Role == harness.RoleTool && m.ToolCallID == id {
				return m.Text()
			}
		}
		return ""
	}
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := shown(reqs[1], "c1"); got != log.String() {
		t.Error("the first showing was not whole")
	}
	for _, req := range reqs[2:] {
		got := shown(req, "c1")
		if !strings.Contains(got, "[settled:") || !strings.Contains(got, "FAILED test_case_301") || len(got) > 2000 {
			t.Errorf("request %d shows c1 as %d bytes:\n%s", req.Round, len(got), got)
		}
	}
	if shown(reqs[2], "c1") != shown(reqs[3], "c1") {
		t.Error("the settled copy changed between requests")
	}
	if r := conv.FindResult("c1"); r.ModelText() != log.String() || r.Cut() {
		t.Error("the stored result was changed")
	}
}

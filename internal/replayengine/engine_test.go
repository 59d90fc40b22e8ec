package replayengine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness/replay"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/promptunit"
	"github.com/agentharness/harness/tokens"
)

func fixture(t testing.TB) *replay.Recording {
	t.Helper()
	rec, err := replay.ParseFile("../../replay/testdata/pydicom-trimmed.traj.json")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func policy(name string, cfg Config) Policy {
	return Policy{Name: name, New: func(Env) (*Config, error) { c := cfg; return &c, nil }}
}

// headGuard cuts every result to its first n bytes at arrival.
func headGuard(n int, locator bool) harness.Guard {
	return func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, call *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, call)
			if err != nil || len(res.FullText()) <= n {
				return res, err
			}
			full := res.FullText()
			cut := harness.Cut{Kind: harness.CutTruncated, By: "head", BytesIn: len(full), BytesOut: n}
			if locator {
				cut.Locator = "call:" + call.ID
			}
			res.Model = []harness.Part{harness.TextPart(full[:n])}
			res.Cuts = append(res.Cuts, cut)
			return res, nil
		}
	}
}

func TestReplayNoneKeepsEverything(t *testing.T) {
	rec := fixture(t)
	rep, err := Replay(context.Background(), rec, policy("none", Config{}), &Options{KeepText: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != rec.Calls() || rep.Needles == 0 || rep.Visible != rep.Needles || rep.Recoverable != rep.Needles {
		t.Fatalf("calls %d, needles %d visible %d recoverable %d", len(rep.Calls), rep.Needles, rep.Visible, rep.Recoverable)
	}
	for i, c := range rep.Calls {
		// Keeping everything is append-only: each request's cached prefix
		// is the whole previous request.
		if i > 0 && c.Cached != rep.Calls[i-1].Input-promptunit.RequestOverhead {
			t.Errorf("call %d: cached %d, previous input %d", c.Index, c.Cached, rep.Calls[i-1].Input)
		}
		if c.Output != c.Recorded.Output || c.Tools != 1 {
			t.Errorf("call %d: output %d recorded %d tools %d", c.Index, c.Output, c.Recorded.Output, c.Tools)
		}
	}
	for _, r := range rep.Results {
		if r.State != "whole" || utf8.RuneCountInString(r.ModelText) != r.FullChars {
			t.Errorf("%s: state %s, shown %d of %d", r.CallID, r.State, utf8.RuneCountInString(r.ModelText), r.FullChars)
		}
	}
	if got, want := rep.Effective, rep.Usage.Effective(); got != want || rep.Usage.Output != rec.RecordedUsage().Output {
		t.Errorf("effective %v, usage %+v", got, rep.Usage)
	}
}

// TestReplayCountsMatchRequest rebuilds each request independently and
// checks the replay's input count against tokens.CountRequest, and the
// cached prefix against the byte serialization of promptunit.AppendUnit.
func TestReplayCountsMatchRequest(t *testing.T) {
	rec := fixture(t)
	bpe, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	var views []*harness.View
	capture := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		// Clear the first tool message on the fourth request only, so the
		// cache breaks there and again when it comes back.
		if v.Round == 4 {
			for i, m := range v.Messages {
				if m.Role == harness.RoleTool {
					_ = v.Replace(i, []harness.Part{harness.TextPart("[cleared]")}, harness.Cut{Kind: harness.CutCleared})
					break
				}
			}
		}
		cp := *v
		cp.Messages = append([]harness.Message(nil), v.Messages...)
		views = append(views, &cp)
		return nil
	})
	rep, err := Replay(context.Background(), rec, policy("probe", Config{Policies: []harness.ViewPolicy{capture}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var prev [][]byte
	for i, c := range rep.Calls {
		req := views[i].Request(0)
		if want := tokens.CountRequest(bpe, req); c.Input != want {
			t.Errorf("call %d: input %d, CountRequest %d", c.Index, c.Input, want)
		}
		units := [][]byte{[]byte(promptunit.ToolsKey(req.Tools))}
		for j := range req.Messages {
			units = append(units, promptunit.AppendUnit(nil, &req.Messages[j]))
		}
		want := 0
		for j := 0; j < len(units) && j < len(prev) && string(units[j]) == string(prev[j]); j++ {
			if j == 0 {
				for _, tl := range req.Tools {
					want += tokens.CountTool(bpe, tl)
				}
				continue
			}
			want += tokens.CountMessage(bpe, &req.Messages[j-1])
		}
		if c.Cached != want {
			t.Errorf("call %d: cached %d, byte-identical prefix %d", c.Index, c.Cached, want)
		}
		prev = units
	}
	if c3, c4 := rep.Calls[3], rep.Calls[4]; c3.Cached >= rep.Calls[2].Input-promptunit.RequestOverhead || c4.Cached >= c3.Input-promptunit.RequestOverhead {
		t.Errorf("clearing did not break the cache: %+v %+v", c3, c4)
	}
}

func TestReplayRetention(t *testing.T) {
	rec := fixture(t)
	for _, tc := range []struct {
		name                 string
		cfg                  Config
		visibleLess, recover bool
	}{
		{"head-no-locator", Config{Guards: []harness.Guard{headGuard(60, false)}}, true, false},
		{"head-store-no-recall", Config{Guards: []harness.Guard{headGuard(60, true)}}, true, false},
		{"head-store-recall", Config{Guards: []harness.Guard{headGuard(60, true)}, Recall: true}, true, true},
	} {
		rep, err := Replay(context.Background(), rec, policy(tc.name, tc.cfg), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.visibleLess != (rep.Visible < rep.Needles) || tc.recover != (rep.Recoverable == rep.Needles) {
			t.Errorf("%s: needles %d visible %d recoverable %d", tc.name, rep.Needles, rep.Visible, rep.Recoverable)
		}
		if !tc.recover && len(rep.Lost) == 0 {
			t.Errorf("%s: nothing listed as lost", tc.name)
		}
		for _, r := range rep.Results {
			if r.FullChars > 60 && r.State != "trimmed" {
				t.Errorf("%s: %s is %s", tc.name, r.CallID, r.State)
			}
		}
	}
}

func TestReplayStopSkipsTheRestOfTheTurn(t *testing.T) {
	rec := fixture(t)
	stop := harness.ViewPolicyFunc(func(_ context.Context, v *harness.View) error {
		if v.Round == 3 && !v.Final {
			v.Stop, v.StopReason = harness.Stuck, "test"
		}
		return nil
	})
	rep, err := Replay(context.Background(), rec, policy("stop", Config{Policies: []harness.ViewPolicy{stop}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 3 || rep.SkippedCalls != rec.Calls()-3 {
		t.Fatalf("%d calls, %d skipped", len(rep.Calls), rep.SkippedCalls)
	}
	last := rep.Calls[2]
	if !last.Stopped || !last.Final || last.Tools != 0 || last.Cached != 0 {
		t.Errorf("the stopped call: %+v", last)
	}
	if rep.Visible >= rep.Needles {
		t.Errorf("needles first used after the stop still counted visible: %d of %d", rep.Visible, rep.Needles)
	}
}

func TestSameMessageMatchesSerialization(t *testing.T) {
	base := harness.Message{Role: harness.RoleTool, ToolCallID: "a", Parts: []harness.Part{harness.TextPart("x")}}
	variants := []harness.Message{
		base,
		{Role: harness.RoleTool, ToolCallID: "a", Parts: []harness.Part{harness.TextPart("y")}},
		{Role: harness.RoleTool, ToolCallID: "b", Parts: []harness.Part{harness.TextPart("x")}},
		{Role: harness.RoleTool, ToolCallID: "a", IsError: true, Parts: []harness.Part{harness.TextPart("x")}},
		{Role: harness.RoleTool, ToolCallID: "a", Parts: []harness.Part{harness.TextPart("x"), harness.TextPart("")}},
		{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "a", Name: "t", Args: []byte(`{}`)}}},
		{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "a", Name: "t", Args: []byte(`{ }`)}}},
		{Role: harness.RoleUser, Parts: []harness.Part{harness.JSONPart([]byte(`1`))}},
		{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("1")}},
	}
	for i := range variants {
		for j := range variants {
			a, b := &variants[i], &variants[j]
			same := string(promptunit.AppendUnit(nil, a)) == string(promptunit.AppendUnit(nil, b))
			if got := promptunit.SameMessage(a, b); got != same {
				t.Errorf("%d vs %d: sameMessage %v, serialization equal %v", i, j, got, same)
			}
		}
	}
}

func TestNeedles(t *testing.T) {
	rec := &replay.Recording{System: "You fix bugs in parser_config files.", Turns: []*replay.Turn{{Input: "Find the failing function.", Calls: []*replay.Call{
		{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "1", Name: "bash", Args: []byte(`{"command":"grep -rn parser_config src"}`)}}},
			Results: []*replay.Result{{CallID: "1", Full: []harness.Part{harness.TextPart("src/load.py:12: def load_parser_config(path):\nsrc/util.py:3: def helper(): # through\n")}}}},
		{Assistant: harness.Message{Parts: []harness.Part{harness.TextPart("The bug goes through load_parser_config.")}, ToolCalls: []harness.ToolCall{{ID: "2", Name: "bash", Args: []byte(`{"command":"sed -n '1,20p' src/load.py\nhelper"}`)}}},
			Results: []*replay.Result{{CallID: "2", Full: []harness.Part{harness.TextPart("def load_parser_config(path):\n    return openConfig(path)\n")}}}},
		{Assistant: harness.Message{Parts: []harness.Part{harness.TextPart("It calls openConfig; load_parser_config again.")}}},
	}}}}
	got := Needles(rec)
	want := []string{"load_parser_config@1:1", "helper@1:1", "openConfig@2:2"}
	var have []string
	for _, n := range got {
		have = append(have, fmt.Sprintf("%s@%s:%d", n.Text, n.CallID, n.Call))
	}
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Errorf("needles %v, want %v", have, want)
	}
}

// TestReplayNoShownChangesNothingElse checks that NoShown leaves every
// figure of the report as it is and only drops the per-request lists.
func TestReplayNoShownChangesNothingElse(t *testing.T) {
	rec := fixture(t)
	p := policy("head", Config{Guards: []harness.Guard{headGuard(2000, true)}, Recall: true})
	full, err := Replay(context.Background(), rec, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := Replay(context.Background(), rec, p, &Options{NoShown: true})
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for i := range full.Calls {
		shown += len(full.Calls[i].Shown)
		if len(lean.Calls[i].Shown) != 0 {
			t.Fatalf("call %d: %d shown with NoShown", i, len(lean.Calls[i].Shown))
		}
		full.Calls[i].Shown = nil
	}
	if shown == 0 {
		t.Fatal("the fixture shows no tool message")
	}
	if !reflect.DeepEqual(full, lean) {
		t.Error("NoShown changed the report's figures")
	}
}

// TestNeedlesComposedProse: words of prose the agent composes in a call's
// arguments count only when they read as code or sit in a line quoted
// from the result; a command's words count whole.
func TestNeedlesComposedProse(t *testing.T) {
	file := "The handler should validate each record before caching.\n" +
		"func validateRecordId(id string) error { return lookup(id) }\n" +
		"    // Entries expire whenever upstream rotates credentials quickly.\n"
	prompt := "Write a short report. The handler should validate every record; it calls validateRecordId " +
		"and you should explain why the behaviour differs between entries, before anything else is changed here."
	quote := "    // Entries expire whenever upstream rotates credentials quickly.\n"
	rec := &replay.Recording{Turns: []*replay.Turn{{Input: "Explain the cache.", Calls: []*replay.Call{
		{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "1", Name: "read", Args: []byte(`{"path":"cache.go"}`)}}},
			Results: []*replay.Result{{CallID: "1", Full: []harness.Part{harness.TextPart(file)}}}},
		{Assistant: harness.Message{ToolCalls: []harness.ToolCall{
			{ID: "2", Name: "task", Args: mustJSON(t, map[string]string{"prompt": prompt})},
			{ID: "3", Name: "edit", Args: mustJSON(t, map[string]string{"old_string": quote + strings.Repeat("- kept as written by the author of this module\n", 2)})},
			{ID: "4", Name: "bash", Args: []byte(`{"command":"grep -n lookup cache.go"}`)},
		}}},
	}}}}
	var have []string
	for _, n := range Needles(rec) {
		have = append(have, n.Text)
	}
	// "validate", "record", "before" (prose of the prompt) are not needles;
	// "validateRecordId" reads as code; "Entries", "expire", "whenever",
	// "upstream", "rotates", "credentials", "quickly" are in a quoted line;
	// "lookup" is a command's word.
	want := []string{"validateRecordId", "Entries", "expire", "whenever", "upstream", "rotates", "credentials", "quickly", "lookup"}
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Errorf("needles %v, want %v", have, want)
	}
}

// TestNeedlesProseLines: in an argument string that is not prose as a
// whole (a file of code and notes, a short to-do), a line that reads as a
// sentence counts as composed prose; a line of code, a command with its
// flags and a short phrase count whole.
func TestNeedlesProseLines(t *testing.T) {
	doc := "Tickets track backlog items; uniqueness of keys matters.\n" +
		"Follow the naming conventions and monitoring guidance below.\n" +
		"category: triage | backlog | started\n"
	file := "## Notes\n" +
		"- [ ] Handle the uniqueness of team keys before release\n" +
		"// Commands should follow the naming conventions always\n" +
		"async getDefault(teamId: string, category: 'triage' | 'backlog'): Promise<State>\n" +
		"export const stateId = states.find((s) => s.type === KIND_X)?.id ?? null;\n" +
		"export const teamKey = teams.find((t) => t.key === KEY_Y)?.key ?? null;\n"
	rec := &replay.Recording{Turns: []*replay.Turn{{Input: "Plan the tickets.", Calls: []*replay.Call{
		{Assistant: harness.Message{ToolCalls: []harness.ToolCall{{ID: "1", Name: "fetch_docs", Args: []byte(`{"topic":"tickets"}`)}}},
			Results: []*replay.Result{{CallID: "1", Full: []harness.Part{harness.TextPart(doc)}}}},
		{Assistant: harness.Message{ToolCalls: []harness.ToolCall{
			{ID: "2", Name: "write", Args: mustJSON(t, map[string]string{"path": "TICKETS.md", "content": file})},
			{ID: "3", Name: "todo", Args: mustJSON(t, map[string]string{"content": "Update every ticket with the monitoring guidance first"})},
			{ID: "4", Name: "bash", Args: []byte(`{"command":"git log --oneline --author someone matters"}`)},
		}}},
	}}}}
	var have []string
	for _, n := range Needles(rec) {
		have = append(have, n.Text)
	}
	// The list item, the comment and the to-do are sentences: "uniqueness",
	// "naming", "monitoring", "guidance" are not needles. The code line's
	// "category", "triage" and "backlog" and the command's "matters" are.
	want := []string{"category", "triage", "backlog", "matters"}
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Errorf("needles %v, want %v", have, want)
	}
	for _, c := range []struct {
		line string
		want bool
	}{
		{"- [ ] Handle the uniqueness of team keys before release", true},
		{"  // Commands should follow the naming conventions always", true},
		{"Update MVP1 tickets with TDD approach now", true},
		{"Handle team key uniqueness", false}, // too short to tell from a command
		{"git log --oneline --author someone matters", false},
		{"if category not in allowed_categories and backlog is None:", false},
		{"async getDefault(teamId: string, category: 'triage' | 'backlog')", false},
		{"grep -rn backlog src/ --include '*.ts'", false},
		// A sentence's parentheses, a comparison standing alone and the
		// typographic apostrophe are prose, not code.
		{`    "Belief updates are inside existing DB transactions (no extra commits)",`, true},
		{"A loop making progress has NCD > 0.3. This catches subtle spin in the agent", true},
		{"+- Clarifier l’ordre de livraison des epics pour garantir l’autonomie: config/secrets avant ingestion.", true},
		{"if (making) return progress(loop, NCD > 0.3) and nothing else here", false},
		{"echo making progress on the loop > notes.txt && cat notes.txt", false},
		// After a list's, a comment's or a to-do's markup three fields do.
		{"- [ ] Handle team key uniqueness", true},
		{"- Some endpoints have specific limits", true},
		{"- Webhooks have 5000ms timeout", false}, // 5000ms: three plain words in four
		{"// User updates (limited by permissions)", true},
		{"// Related data", false},
		{"} else {", false},
		{"- run: npm", false},
	} {
		if got := proseLine(c.line); got != c.want {
			t.Errorf("proseLine(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplayCountsOutputWithoutUsage: a call whose source records its
// usage keeps the billed output; one whose source records none is charged
// its reply counted, text and tool calls, instead of nothing.
func TestReplayCountsOutputWithoutUsage(t *testing.T) {
	reply := harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Let me list the files of the repository first.")},
		ToolCalls: []harness.ToolCall{{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"ls -la src"}`)}}}
	answer := harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("Done.")}}
	rec := func(billed bool) *replay.Recording {
		c1 := &replay.Call{Assistant: reply, Results: []*replay.Result{{CallID: "c1", Tool: "bash", Full: []harness.Part{harness.TextPart("main.go")}}}}
		c2 := &replay.Call{Assistant: answer, Final: true}
		if billed {
			c1.Usage, c1.HasUsage = harness.Usage{Input: 50, Output: 7}, true
			c2.Usage, c2.HasUsage = harness.Usage{Input: 60, Output: 2}, true
		}
		return &replay.Recording{ID: "out", Turns: []*replay.Turn{{Input: "list", Calls: []*replay.Call{c1, c2}}}}
	}
	billed, err := Replay(context.Background(), rec(true), policy("none", Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if billed.Calls[0].Output != 7 || billed.Calls[1].Output != 2 {
		t.Errorf("billed outputs %d, %d; want 7, 2", billed.Calls[0].Output, billed.Calls[1].Output)
	}
	unbilled, err := Replay(context.Background(), rec(false), policy("none", Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	counter, err := tokens.O200k()
	if err != nil {
		t.Fatal(err)
	}
	want := tokens.CountMessage(counter, &reply) - promptunit.MessageOverhead
	if got := unbilled.Calls[0].Output; got != want || got < 10 {
		t.Errorf("unbilled output %d, want the reply counted: %d", got, want)
	}
	if unbilled.Calls[1].Output <= 0 {
		t.Errorf("the answer's output %d, want it counted", unbilled.Calls[1].Output)
	}
}

package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/provider/scripted"
	"github.com/agentharness/harness/tokens"
)

func TestActiveAtReadsTheNewestRoundsUpToTheMarksKeptRounds(t *testing.T) {
	round := readRound
	conv := harness.NewConversation("a")
	conv.Turns = []*harness.Turn{{Index: 1, Rounds: []*harness.Round{
		round(1, "look for parse_line", `{"pattern":"parse_line"}`),
		round(2, "parse_line calls split_field", `{"path":"b"}`),
		round(3, "then emit_row", `{"path":"c"}`),
		round(4, "nothing quoted here", `{"path":"d"}`),
		round(5, "an answer without calls: write_out", ""),
		round(6, "more of nothing", `{"path":"e"}`),
		round(7, "still nothing", `{"path":"f"}`),
	}}}
	res := harness.TextResult("func parse_line(s string) {\n\tsplit_field(s)\n\temit_row(s)\n\twrite_out(s)\n}\n")
	own := harness.TextResult("parse_line only\n")
	for _, tc := range []struct {
		name         string
		res          *harness.ToolResult
		active, keep int
		pos, mark    compactPos
		want         bool
	}{
		// The window of mark 1.1 ends at its 1st kept round with results
		// (1.2), which quotes split_field.
		{"quoted in the window", res, 2, 1, compactPos{1, 1}, compactPos{1, 1}, true},
		// parse_line was in the call that made the result: no quote.
		{"the call's own words are no quote", own, 2, 1, compactPos{1, 1}, compactPos{1, 1}, false},
		{"quoted only before the window", res, 1, 1, compactPos{1, 1}, compactPos{1, 4}, false},
		// The window of 1.4 with 2 kept rounds ends at 1.7 (1.5 has no
		// results: read, not counted), and 3 rounds back reach 1.5.
		{"a round without results is in the window", res, 3, 2, compactPos{1, 1}, compactPos{1, 4}, true},
		{"the window's end is the kept rounds", res, 2, 2, compactPos{1, 1}, compactPos{1, 4}, false},
		{"a quote at or before the result is none", res, 3, 1, compactPos{1, 3}, compactPos{1, 3}, false},
		{"the newest quote, long ago", res, 8, 1, compactPos{1, 1}, compactPos{1, 6}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &compaction{compactConfig: compactConfig{active: tc.active, keepRounds: tc.keep}, v: &harness.View{Conversation: conv}}
			if got := c.activeAt(tc.res, tc.pos, tc.mark); got != tc.want {
				t.Fatalf("activeAt(%v, %v) = %v, want %v", tc.pos, tc.mark, got, tc.want)
			}
		})
	}
}

// activeRun runs one turn of n reads of 60-line files; step i quotes an
// identifier of the result before it and, while i < editUntil, one of the
// first result's (the file the agent is editing). It returns the
// requests, the policy's clears, the conversation and the usage.
func activeRun(t *testing.T, n, editUntil int, p *CompactPolicy, guards ...harness.Guard) ([]*harness.Request, []harness.Event, *harness.Conversation, harness.Usage) {
	t.Helper()
	read := harness.Tool{
		Spec: harness.ToolSpec{Name: "read", Risk: harness.ReadOnly},
		Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			var b strings.Builder
			for l := range 60 {
				fmt.Fprintf(&b, "line %d of %s: field_%s_%d = %s\n", l+1, c.Args, c.ID, l+1, filler(l, 24))
			}
			return harness.TextResult(b.String()), nil
		},
	}
	var steps []scripted.Step
	for i := range n {
		text := fmt.Sprintf("reading part %d", i)
		if i > 0 {
			text += fmt.Sprintf("; the value I need is field_%s_7", callIDOf(i-1))
		}
		if i > 0 && i < editUntil {
			text += "; still editing field_call000_9"
		}
		steps = append(steps, scripted.Step{Text: text, ToolCalls: []scripted.Call{{ID: callIDOf(i), Name: "read", Args: []byte(fmt.Sprintf(`{"path":"part%03d.txt"}`, i))}}})
	}
	steps = append(steps, scripted.Step{Text: "done"})
	rec := &stuckRecorder{}
	agent, err := harness.New(rec.wrap(scripted.New(&scripted.Script{Steps: steps}, &scripted.Options{Counter: o200k(t)})), &harness.Options{
		Tools: []harness.Tool{read}, MaxRounds: n + 1, Observer: rec.observe, Policies: []harness.ViewPolicy{p}, Guards: guards,
	})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("a")
	res, err := agent.Run(context.Background(), conv, "read every part")
	if err != nil || res.Outcome != harness.Answered {
		t.Fatalf("%v %s", err, res.Outcome)
	}
	return rec.reqs, rec.policyEvents(compactName), conv, res.Usage
}

// shownAs is how each request shows call000's result: "whole", "cleared"
// or "" when absent.
func shownAs(req *harness.Request, id string) string {
	for _, m := range req.Messages {
		if m.Role == harness.RoleTool && m.ToolCallID == id {
			if strings.HasPrefix(m.Text(), "[cleared") {
				return "cleared"
			}
			return "whole"
		}
	}
	return ""
}

// TestCompactKeepActiveKeepsTheResultBeingWorkedOn: the agent quotes the
// first result in every round up to editUntil; the clears made while it
// does leave it whole, a later clear takes it, every result once cleared
// shows the same text in every later request, each clear breaks the
// cache once, and a view rebuilt from the transcript by another policy is
// byte for byte the one the run's policy builds.
func TestCompactKeepActiveKeepsTheResultBeingWorkedOn(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	const n, editUntil = 48, 24
	opts := func() *CompactPolicy {
		return &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: c}
	}
	p := opts()
	reqs, evs, conv, _ := activeRun(t, n, editUntil, p)
	if len(evs) < 2 {
		t.Fatalf("%d clears, want at least 2", len(evs))
	}
	// Without the rule the first clear takes call000.
	offReqs, offEvs, _, _ := activeRun(t, n, editUntil, &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: c, NoKeepActive: true})
	if len(offEvs) == 0 {
		t.Fatal("no clear without the rule")
	}
	firstOff := -1
	for k, req := range offReqs {
		if shownAs(req, "call000") == "cleared" {
			firstOff = k
			break
		}
	}
	if firstOff < 0 || firstOff >= editUntil {
		t.Fatalf("without the rule call000 is first cleared in request %d, want one before %d", firstOff, editUntil)
	}
	states := map[string]string{}
	whole, cleared := 0, 0
	for k, req := range reqs {
		for _, m := range req.Messages {
			if m.Role != harness.RoleTool {
				continue
			}
			if prev, ok := states[m.ToolCallID]; ok && strings.HasPrefix(prev, "[cleared") && prev != m.Text() {
				t.Fatalf("request %d: call %s, once cleared, shows %q after %q", k, m.ToolCallID, m.Text(), prev)
			}
			states[m.ToolCallID] = m.Text()
		}
		switch shownAs(req, "call000") {
		case "whole":
			if k >= firstOff {
				whole++
			}
		case "cleared":
			if k < editUntil {
				t.Fatalf("request %d clears call000 while the agent is quoting it", k)
			}
			cleared++
		}
	}
	if whole == 0 || cleared == 0 {
		t.Fatalf("call000 whole in %d requests after a clear, cleared in %d: want both", whole, cleared)
	}
	if breaks := cacheBreaks(reqs); breaks != len(evs) {
		t.Fatalf("%d cache breaks for %d clears", breaks, len(evs))
	}
	// Two later views, one by the run's policy and one by a policy that
	// has seen nothing of the conversation, are byte-identical.
	turn := conv.Turns[len(conv.Turns)-1]
	a := harness.BuildView(conv, turn, "", nil, false)
	b := harness.BuildView(conv, turn, "", nil, false)
	if err := p.ApplyView(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := opts().ApplyView(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if ja, jb := viewJSON(a), viewJSON(b); ja != jb {
		t.Fatalf("two later views differ:\n%s\n%s", ja, jb)
	}
}

// With the savings bank, what stays whole is priced, and so is a later
// clear that takes a result an earlier one kept (its miss starts earlier
// in the prefix: the bank prices the view after the clear, afterClear):
// the clears it covers still make the run cost no more than keeping
// everything under every price.
func TestCompactKeepActiveBankPricesWhatStays(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	const n = 60
	for _, tc := range []struct {
		name      string
		editUntil int
		wantLast  string // how the last request shows call000
	}{
		{"quoted to the end", n, "whole"},
		{"quoted in the first half", n / 2, "cleared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, none := activeRun(t, n, tc.editUntil, &CompactPolicy{Window: 1 << 20, Counter: c, NoClearOld: true})
			reqs, evs, _, usage := activeRun(t, n, tc.editUntil, &CompactPolicy{Window: 1 << 20, Counter: c, ClearOld: 3000, ClearOldKeepRounds: 3}, thirdOf)
			if len(evs) == 0 {
				t.Fatal("no clear covered")
			}
			for _, p := range defaultCompactPrices() {
				if w, k := priced(p, usage), priced(p, none); w > k+1e-9 {
					t.Errorf("under %s the run cost %.1f, keeping everything %.1f", p.Name, w, k)
				}
			}
			firstClear := -1
			for k, req := range reqs {
				if firstClear < 0 && strings.Contains(fmt.Sprint(req.Messages), "[cleared") {
					firstClear = k
				}
			}
			if firstClear < 0 || firstClear >= tc.editUntil || shownAs(reqs[firstClear], "call000") != "whole" {
				t.Fatalf("the first clear (request %d) should come while call000 is quoted and keep it whole", firstClear)
			}
			if got := shownAs(reqs[len(reqs)-1], "call000"); got != tc.wantLast {
				t.Fatalf("call000 is %s in the last request, want %s", got, tc.wantLast)
			}
		})
	}
}

func TestCompactActiveRoundsConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		off     bool
		rounds  int
		want    int
		wantErr bool
	}{
		{"on by default", false, 0, defaultCompactActiveRounds, false},
		{"NoKeepActive turns it off", true, 0, 0, false},
		{"NoKeepActive wins over rounds", true, 5, 0, false},
		{"rounds set", false, 8, 8, false},
		{"negative rounds", false, -1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &CompactPolicy{NoKeepActive: tc.off, ActiveRounds: tc.rounds, Counter: tokens.NewCache(o200k(t), nil)}
			cfg, err := p.config()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want an error: %v", err, tc.wantErr)
			}
			if err == nil && cfg.active != tc.want {
				t.Fatalf("active rounds %d, want %d", cfg.active, tc.want)
			}
		})
	}
}

// fuzzConv builds a one-turn conversation from script: rounds split at
// '|', a round starting with '!' has no results.
func fuzzConv(script string) *harness.Conversation {
	conv := harness.NewConversation("f")
	t := &harness.Turn{Index: 1}
	for i, text := range strings.Split(script, "|") {
		r := &harness.Round{Index: i + 1, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart(text)}}}
		if !strings.HasPrefix(text, "!") {
			r.Results = []*harness.ToolResult{harness.TextResult("x")}
		}
		t.Rounds = append(t.Rounds, r)
	}
	conv.Turns = []*harness.Turn{t}
	return conv
}

// FuzzKeepActiveIsQuotedByOverItsWindow checks activeAt against
// the quoted-word rule (quotedBy) read over the same rounds — the newest
// active rounds up to the window's end, and every round up to the result
// for the words that are no quote — and that rounds appended after a
// complete window change nothing (every later view decides alike).
func FuzzKeepActiveIsQuotedByOverItsWindow(f *testing.F) {
	f.Add("find parse_line|parse_line calls split_field|!answer emit_row|more|still", "later emit_row split_field", uint8(2), uint8(1), uint8(0), uint8(0))
	f.Add("a|b split_field|c|d emit_row|e|f", "g", uint8(3), uint8(2), uint8(1), uint8(2))
	f.Add("|||", "", uint8(0), uint8(0), uint8(9), uint8(1))
	f.Add("write_out|!write_out|!x|y", "write_out", uint8(8), uint8(3), uint8(0), uint8(1))
	res := harness.TextResult("func parse_line(s string) {\n\tsplit_field(s)\n\temit_row(s)\n\twrite_out(s)\n}\n")
	f.Fuzz(func(t *testing.T, script, extra string, active, keep, posAt, markAt uint8) {
		conv := fuzzConv(script)
		rounds := conv.Turns[0].Rounds
		n, after := int(active%10)+1, int(keep%5)+1
		pos := compactPos{1, int(posAt)%len(rounds) + 1}
		mark := compactPos{1, max(pos.round, int(markAt)%len(rounds)+1)}
		c := &compaction{compactConfig: compactConfig{active: n, keepRounds: after}, v: &harness.View{Conversation: conv}}
		got := c.activeAt(res, pos, mark)
		// The window: the newest n rounds up to the after-th round with
		// results after mark.
		end, left := len(rounds), after
		for i, r := range rounds {
			if i+1 > mark.round {
				if left <= 0 {
					end = i
					break
				}
				if len(r.Results) > 0 {
					left--
				}
			}
		}
		in := map[*harness.Round]bool{}
		for i := max(0, end-n); i < end; i++ {
			in[rounds[i]] = true
		}
		wordsOf := func(r *harness.Round) []string {
			if r.Index <= pos.round || in[r] {
				return roundWords(r)
			}
			return nil
		}
		want := holdsQuoted(res.ModelText(), quotedBy(conv, pos, compactPos{1, len(rounds)}, 0, wordsOf))
		if got != want {
			t.Fatalf("activeAt = %v, quotedBy over the window = %v (window rounds %d-%d)", got, want, max(0, end-n)+1, end)
		}
		if left > 0 {
			return // the window's end is not there yet
		}
		more := fuzzConv(script + "|" + extra)
		c = &compaction{compactConfig: compactConfig{active: n, keepRounds: after}, v: &harness.View{Conversation: more}}
		if again := c.activeAt(res, pos, mark); again != got {
			t.Fatalf("a round appended after the window changed the answer: %v, then %v", got, again)
		}
	})
}

// TestCompactForcedClearTakesTheWorkingSet: a request that would not fit
// the window is cleared whatever the working set holds, its mark says so
// ("compact all"), and every later view clears the working set it took:
// the result the agent keeps quoting is cleared by the first forced clear
// and never shown whole again.
func TestCompactForcedClearTakesTheWorkingSet(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	const n, editUntil = 30, 28
	reqs, evs, conv, _ := activeRun(t, n, editUntil, &CompactPolicy{Unbounded: true, NoClearOld: true, Window: 9_000, Counter: c})
	if len(evs) == 0 {
		t.Fatal("no forced clear")
	}
	all := 0
	for _, note := range conv.Notes {
		if note != nil && note.ClearTurn != 0 {
			if !(&compactConfig{}).ruleOf(note.By).all {
				t.Errorf("a forced clear recorded %q, want its rule to take the working set", note.By)
			}
			all++
		}
	}
	if all == 0 {
		t.Fatal("no clearing mark recorded")
	}
	first := -1
	for k, req := range reqs {
		state := shownAs(req, "call000")
		if first < 0 && state == "cleared" {
			first = k
		}
		if first >= 0 && state != "cleared" {
			t.Fatalf("call000 is %s in request %d after a forced clear took it in request %d", state, k, first)
		}
	}
	if first < 0 || first >= editUntil {
		t.Fatalf("the working set survived the forced clears (call000 first cleared in request %d, quoted until %d)", first, editUntil)
	}
	// Fitting the window, the same run keeps call000 whole while it is quoted.
	reqs, _, _, _ = activeRun(t, n, editUntil, &CompactPolicy{Unbounded: true, NoClearOld: true, Window: 1 << 20, HighWater: 0.01, Target: 0.005, Counter: c})
	for k, req := range reqs[:editUntil] {
		if state := shownAs(req, "call000"); state == "cleared" {
			t.Fatalf("a clear that is not forced took the working set (request %d)", k)
		}
	}
}

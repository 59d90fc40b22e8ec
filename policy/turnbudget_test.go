package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// body returns a text of n characters (ASCII unless r is multi-byte),
// distinct per seed so that a cut is visible.
func body(seed string, n int, r rune) string {
	var b strings.Builder
	for i := 0; b.Len() < n*utf8.RuneLen(r); i++ {
		if i%50 == 0 {
			b.WriteString(seed)
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	rs := []rune(s)
	return string(rs[:n])
}

// turnWith returns a conversation whose last turn has one round per entry
// of rounds, each with results of the given character sizes, and an
// earlier turn with a big result that no budget of the new turn touches.
func turnWith(rounds ...[]int) (*harness.Conversation, *harness.Turn) {
	conv := harness.NewConversation("c_test")
	old := &harness.Turn{Index: 1, Input: "earlier question"}
	old.Rounds = []*harness.Round{
		{Index: 1, Assistant: harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{ID: "old_1", Name: "read"}}},
			Results: []*harness.ToolResult{{CallID: "old_1", Tool: "read", Parts: []harness.Part{harness.TextPart(body("old", 50_000, 'o'))}}}},
		{Index: 2, Assistant: harness.Message{Role: harness.RoleAssistant, Parts: []harness.Part{harness.TextPart("old answer")}}},
	}
	turn := &harness.Turn{Index: 2, Input: "which posts mention the feature?"}
	for ri, sizes := range rounds {
		r := &harness.Round{Index: ri + 1, Assistant: harness.Message{Role: harness.RoleAssistant}}
		for ci, n := range sizes {
			id := fmt.Sprintf("call_r%d_%d", ri+1, ci+1)
			r.Assistant.ToolCalls = append(r.Assistant.ToolCalls, harness.ToolCall{ID: id, Name: "fetch"})
			r.Results = append(r.Results, &harness.ToolResult{CallID: id, Tool: "fetch", Parts: []harness.Part{harness.TextPart(body(id, n, 'x'))}})
		}
		turn.Rounds = append(turn.Rounds, r)
	}
	conv.Turns = []*harness.Turn{old, turn}
	return conv, turn
}

// turnEvidence returns the character sizes of the view's tool messages of
// the current turn, in order.
func turnEvidence(v *harness.View) []int {
	var out []int
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && v.Origins[i].Turn == v.Turn.Index {
			out = append(out, utf8.RuneCountInString(m.Text()))
		}
	}
	return out
}

func apply(t *testing.T, p harness.ViewPolicy, conv *harness.Conversation, turn *harness.Turn, final bool) *harness.View {
	t.Helper()
	v := harness.BuildView(conv, turn, "system prompt", nil, final)
	if err := p.ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTurnBudgetSeedExamples(t *testing.T) {
	tests := []struct {
		name      string
		rounds    [][]int
		wantSizes []int
		wantTotal int
	}{
		{"lopsided", [][]int{{300, 420}, {800, 8000}, {8000, 8000, 8000}}, []int{300, 420, 800, 5620, 5620, 5620, 5620}, 24_000},
		{"seven bodies", [][]int{{8000, 8000, 8000}, {8000, 8000, 8000, 8000}}, slices.Repeat([]int{3428}, 7), 23_996},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv, turn := turnWith(tt.rounds...)
			v := apply(t, &TurnBudget{When: FinalRound}, conv, turn, true)
			got := turnEvidence(v)
			if !slices.Equal(got, tt.wantSizes) {
				t.Fatalf("sizes = %v, want %v", got, tt.wantSizes)
			}
			if s := sum(got); s != tt.wantTotal {
				t.Errorf("turn evidence = %d, want %d", s, tt.wantTotal)
			}
			for i, m := range v.Messages {
				if m.Role != harness.RoleTool || v.Origins[i].Turn != 2 {
					continue
				}
				res := v.Origins[i].Result
				full := res.FullText()
				text := m.Text()
				if utf8.RuneCountInString(full) <= utf8.RuneCountInString(text) {
					if text != full || len(v.Origins[i].Cuts) != 0 {
						t.Errorf("%s: an untouched result changed", res.CallID)
					}
					continue
				}
				if !strings.Contains(text, defaultTurnMarker) {
					t.Errorf("%s: trimmed without the marker:\n%s", res.CallID, text[len(text)-200:])
				}
				want := fmt.Sprintf("removed; full result: call id %s]", res.CallID)
				if !strings.HasSuffix(text, want) {
					t.Errorf("%s: marker does not end with %q: %q", res.CallID, want, text[len(text)-120:])
				}
				prefix, _, _ := strings.Cut(text, defaultTurnMarker)
				if !strings.HasPrefix(full, prefix) {
					t.Errorf("%s: the kept part is not the head of the full result", res.CallID)
				}
				removed := utf8.RuneCountInString(full) - utf8.RuneCountInString(prefix)
				if !strings.Contains(text, fmt.Sprintf("[%d of %d chars removed;", removed, utf8.RuneCountInString(full))) {
					t.Errorf("%s: marker does not say %d of %d removed: %q", res.CallID, removed, utf8.RuneCountInString(full), text[len(prefix):])
				}
				cuts := v.Origins[i].Cuts
				if len(cuts) != 1 || cuts[0].Kind != harness.CutTrimmed || cuts[0].By != "turnbudget" ||
					cuts[0].BytesIn != len(full) || cuts[0].BytesOut != len(text) || cuts[0].Locator != "call:"+res.CallID {
					t.Errorf("%s: cut = %+v", res.CallID, cuts)
				}
				if len(res.Cuts) > 0 || res.Model != nil || res.FullText() != full {
					t.Errorf("%s: the stored result was modified", res.CallID)
				}
			}
		})
	}
}

func TestTurnBudgetScope(t *testing.T) {
	conv, turn := turnWith([]int{8000, 8000, 8000, 8000, 8000, 8000, 8000})
	base := harness.BuildView(conv, turn, "system prompt", nil, true)
	v := apply(t, &TurnBudget{}, conv, turn, true)
	for i, m := range v.Messages {
		o := v.Origins[i]
		if m.Role == harness.RoleTool && o.Turn == turn.Index {
			continue
		}
		if m.Text() != base.Messages[i].Text() || len(o.Cuts) != 0 {
			t.Errorf("message %d (%s, turn %d) changed; only the current turn's tool messages may", i, m.Role, o.Turn)
		}
	}
	if got := utf8.RuneCountInString(v.Messages[3].Text()); got != 50_000 {
		t.Errorf("the earlier turn's result has %d chars, want it whole (50,000)", got)
	}
}

func TestTurnBudgetWhen(t *testing.T) {
	conv, turn := turnWith([]int{8000, 8000, 8000}, []int{8000, 8000}, []int{9000, 1000})
	// FinalRound leaves a request with tools untouched.
	v := apply(t, &TurnBudget{When: FinalRound}, conv, turn, false)
	if got := turnEvidence(v); !slices.Equal(got, []int{8000, 8000, 8000, 8000, 8000, 9000, 1000}) {
		t.Errorf("FinalRound trimmed a non-final request: %v", got)
	}
	// EveryRound keeps the newest round whole; the older share the rest.
	v = apply(t, &TurnBudget{When: EveryRound}, conv, turn, false)
	got := turnEvidence(v)
	if got[5] != 9000 || got[6] != 1000 {
		t.Errorf("EveryRound cut the newest round: %v", got)
	}
	if want := slices.Repeat([]int{(24_000 - 10_000) / 5}, 5); !slices.Equal(got[:5], want) {
		t.Errorf("older results = %v, want %v", got[:5], want)
	}
	if s := sum(got); s > 24_000 {
		t.Errorf("EveryRound total %d exceeds the budget", s)
	}
	// When the newest round alone exceeds the budget, everything shares it.
	conv, turn = turnWith([]int{8000, 8000}, []int{20_000, 20_000})
	v = apply(t, &TurnBudget{When: EveryRound}, conv, turn, false)
	if got := turnEvidence(v); !slices.Equal(got, []int{6000, 6000, 6000, 6000}) {
		t.Errorf("newest round over the budget: %v, want 4 × 6000", got)
	}
}

func TestTurnBudgetSpillLocator(t *testing.T) {
	conv, turn := turnWith([]int{8000, 8000, 8000, 8000})
	res := turn.Rounds[0].Results[1]
	full := res.FullText()
	res.Model = []harness.Part{harness.TextPart(full[:7000])}
	res.Cuts = []harness.Cut{{Kind: harness.CutSpilled, By: "ceiling", BytesIn: 8000, BytesOut: 7000, Locator: ".harness/spill/c_test/call_r1_2-fetch.txt"}}
	v := apply(t, &TurnBudget{Chars: 10_000, MinKeep: 500, When: FinalRound}, conv, turn, true)
	for i, m := range v.Messages {
		if m.ToolCallID != res.CallID {
			continue
		}
		if !strings.HasSuffix(m.Text(), "full result: .harness/spill/c_test/call_r1_2-fetch.txt]") {
			t.Errorf("marker does not name the spill file: %q", m.Text()[len(m.Text())-150:])
		}
		if c := v.Origins[i].Cuts; len(c) != 1 || c[0].Locator != ".harness/spill/c_test/call_r1_2-fetch.txt" || c[0].BytesIn != 7000 {
			t.Errorf("cut = %+v", c)
		}
		if utf8.RuneCountInString(m.Text()) != 2500 {
			t.Errorf("size %d, want the cap 2500", utf8.RuneCountInString(m.Text()))
		}
	}
}

func TestTurnBudgetMultiByteAndImages(t *testing.T) {
	conv, turn := turnWith([]int{8000, 8000, 8000, 8000})
	for i, r := range turn.Rounds[0].Results {
		r.Parts = []harness.Part{harness.TextPart(body("é🙂", 8000, []rune{'é', '🙂', '語', 'x'}[i]))}
	}
	img := harness.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G'})
	turn.Rounds[0].Results[0].Parts = append(turn.Rounds[0].Results[0].Parts, img)
	v := apply(t, &TurnBudget{Chars: 10_000, MinKeep: 1000, When: FinalRound}, conv, turn, true)
	got := turnEvidence(v)
	// The 4-byte "PNG" has no size: it is priced as a fallback square, so
	// its result's text keeps the floor and the others share the rest.
	if !slices.Equal(got, []int{1000, 2500, 2500, 2500}) {
		t.Fatalf("sizes = %v", got)
	}
	for _, m := range v.Messages {
		if m.Role == harness.RoleTool && !utf8.ValidString(m.Text()) {
			t.Errorf("%s: cut inside a UTF-8 sequence", m.ToolCallID)
		}
	}
	var first harness.Message
	for _, m := range v.Messages {
		if m.ToolCallID == "call_r1_1" {
			first = m
		}
	}
	if n := len(first.Parts); n != 2 || first.Parts[1].Type != harness.PartImage {
		t.Errorf("the image of a trimmed result was dropped: %+v", first.Parts)
	}
}

func TestTurnBudgetTokens(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	conv, turn := turnWith([]int{1}, []int{1}, []int{1})
	for i, r := range []*harness.ToolResult{turn.Rounds[0].Results[0], turn.Rounds[1].Results[0], turn.Rounds[2].Results[0]} {
		r.Parts = []harness.Part{harness.TextPart(strings.Repeat(fmt.Sprintf("w%d ", i), []int{100, 3000, 5000}[i]))}
	}
	b := &TurnBudget{Chars: 2000, MinKeep: 100, Counter: tokens.CounterFunc(words), When: FinalRound}
	v := apply(t, b, conv, turn, true)
	var got []int
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && v.Origins[i].Turn == 2 {
			got = append(got, words(m.Text()))
			if i > 0 && v.Origins[i].Result.CallID != "call_r1_1" && !strings.Contains(m.Text(), "tokens removed") {
				t.Errorf("%s: marker does not count tokens: %q", m.ToolCallID, m.Text()[len(m.Text())-100:])
			}
		}
	}
	// Water-filling on {100, 3000, 5000} words with 2000: 100 whole, cap 950.
	if !slices.Equal(got, []int{100, 950, 950}) {
		t.Errorf("token sizes = %v, want [100 950 950]", got)
	}
}

func TestTurnBudgetTinyBudgetStillMarks(t *testing.T) {
	conv, turn := turnWith([]int{500, 500})
	v := apply(t, &TurnBudget{Chars: 40, MinKeep: 20}, conv, turn, true)
	for i, m := range v.Messages {
		if m.Role != harness.RoleTool || v.Origins[i].Turn != 2 {
			continue
		}
		if n := utf8.RuneCountInString(m.Text()); n != 20 {
			t.Errorf("%s: %d chars, want the cap 20", m.ToolCallID, n)
		}
		if !strings.HasSuffix(m.Text(), shortTurnMarker) {
			t.Errorf("%s: no marker: %q", m.ToolCallID, m.Text())
		}
	}
}

func TestTurnBudgetEvents(t *testing.T) {
	var (
		mu     sync.Mutex
		events []harness.Event
	)
	ctx := harness.WithObserver(context.Background(), func(e harness.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	conv, turn := turnWith([]int{300, 420, 800, 8000, 8000, 8000, 8000})
	v := harness.BuildView(conv, turn, "", nil, true)
	if err := (&TurnBudget{When: FinalRound}).ApplyView(ctx, v); err != nil {
		t.Fatal(err)
	}
	if len(events) != 5 {
		t.Fatalf("%d events, want 4 per-result and 1 summary", len(events))
	}
	for _, e := range events[:4] {
		if e.Kind != harness.EventPolicy || e.Policy != "turnbudget" || e.Call == nil || e.Result == nil ||
			len(e.Result.Cuts) != 1 || e.Data["size_out"] != 5620 || e.Conversation != "c_test" || e.Turn != 2 {
			t.Errorf("per-result event = %+v", e)
		}
	}
	s := events[4].Data
	if s["cap"] != 5620 || s["before"] != 33_520 || s["after"] != 24_000 || s["trimmed"] != 4 || s["results"] != 7 {
		t.Errorf("summary = %v", s)
	}
}

// TestTurnBudgetInAgent runs the FinalRound policy in the real loop: a model that
// calls a tool returning 8,000 characters in every round until the round
// limit; the synthesis request carries the turn's results within 24,000.
func TestTurnBudgetInAgent(t *testing.T) {
	var (
		mu       sync.Mutex
		requests []*harness.Request
	)
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		if req.Final {
			return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("answer")}}}, nil
		}
		return &harness.Response{Message: harness.Message{ToolCalls: []harness.ToolCall{
			{ID: fmt.Sprintf("a%d", req.Round), Name: "fetch", Args: []byte(`{}`)},
			{ID: fmt.Sprintf("b%d", req.Round), Name: "fetch", Args: []byte(`{}`)},
		}}}, nil
	})
	fetch := harness.Tool{Spec: harness.ToolSpec{Name: "fetch", Risk: harness.ReadOnly}, Func: func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
		return harness.TextResult(body(c.ID, 8000, 'z')), nil
	}}
	agent, err := harness.New(model, &harness.Options{Tools: []harness.Tool{fetch}, MaxRounds: 4, Policies: []harness.ViewPolicy{&TurnBudget{When: FinalRound}}})
	if err != nil {
		t.Fatal(err)
	}
	conv := harness.NewConversation("")
	res, err := agent.Run(context.Background(), conv, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != harness.RoundLimit || len(requests) != 5 {
		t.Fatalf("outcome %s after %d requests", res.Outcome, len(requests))
	}
	if got := res.Turn.Rounds[3].Stats.EvidenceChars; got != 6*8000 {
		t.Errorf("the last request with tools shows %d chars, want all 48,000 of rounds 1-3 (FinalRound)", got)
	}
	final := res.Turn.Rounds[4]
	if !final.Final || final.Stats.EvidenceChars != 24_000 {
		t.Errorf("synthesis request shows %d chars of evidence, want 24,000 (8 × 3,000)", final.Stats.EvidenceChars)
	}
	for _, r := range res.Turn.Rounds[:4] {
		for _, tr := range r.Results {
			if utf8.RuneCountInString(tr.FullText()) != 8000 || len(tr.Cuts) > 0 {
				t.Errorf("%s: the stored result was changed by a view policy", tr.CallID)
			}
		}
	}
}

// FuzzTrimText checks the trim of one result: within the limit, cut at a
// rune boundary, marked, and the kept part is a prefix of the input.
func FuzzTrimText(f *testing.F) {
	f.Add("hello world, this is a long result", 20, false)
	f.Add(strings.Repeat("é🙂語", 400), 300, false)
	f.Add(strings.Repeat("word ", 2000), 150, true)
	f.Add("\xff\xfe invalid \xc3 utf-8 \xe2\x82", 12, false)
	f.Add(strings.Repeat("x", 10_000), 1, false)
	f.Fuzz(func(t *testing.T, text string, limit int, tokens bool) {
		if limit < 0 || limit > 1<<20 {
			t.Skip()
		}
		ms := measure{count: utf8.RuneCountInString, chars: true, unit: "chars"}
		if tokens {
			ms = measure{count: func(s string) int { return len(strings.Fields(s)) + strings.Count(s, "…") }, unit: "tokens"}
		}
		size := ms.count(text)
		if size <= limit {
			return // never trimmed: the policy leaves results under the cap whole
		}
		out, n, mark := trimText(text, size, limit, defaultTurnMarker, "call id c1", ms)
		if !strings.HasSuffix(out, mark) {
			t.Fatalf("reported marker %q does not end %q", mark, out)
		}
		if n != ms.count(out) {
			t.Fatalf("reported size %d, measured %d", n, ms.count(out))
		}
		if n > limit {
			t.Fatalf("trimmed to %d > limit %d: %q", n, limit, out)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("cut inside a UTF-8 sequence: %q", out)
		}
		marked := strings.Contains(out, "… (trimmed")
		if !marked && ms.count(shortTurnMarker) <= limit {
			t.Fatalf("no marker in %q (limit %d)", out, limit)
		}
		if marked {
			i := strings.LastIndex(out, "\n… (trimmed")
			if !strings.HasPrefix(text, out[:i]) {
				t.Fatalf("kept part is not a prefix of the input")
			}
		}
	})
}

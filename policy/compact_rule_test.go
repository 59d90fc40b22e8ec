package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// sizedConv is one turn of len(sizes) read rounds whose results are about
// sizes[r] tokens.
func sizedConv(sizes []int) *harness.Conversation {
	conv := compactConv([]int{len(sizes)}, 1)
	for r, n := range sizes {
		res := conv.Turns[0].Rounds[r].Results[0]
		res.Parts = []harness.Part{harness.TextPart(filler(r+1, n))}
		res.Bytes = res.PayloadSize()
	}
	return conv
}

// alternating is n sizes, small at odd rounds and big at even ones.
func alternating(n, small, big int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = small
		if (i+1)%2 == 0 {
			out[i] = big
		}
	}
	return out
}

// sizeRule is a rule whose clears for cost take only the results of at
// least from tokens (the zero rule for 0), named as the old words were.
func sizeRule(from int) ClearRule {
	if from == 0 {
		return ClearRule{}
	}
	return ClearRule{Name: "clear-from " + strconv.Itoa(from), Clear: func(c ClearCandidate) (bool, string) { return c.Tokens() >= from, "" }}
}

// previewRule is a rule whose clears for cost leave whole the results a
// ceiling cut to a preview.
func previewRule() ClearRule {
	return ClearRule{Name: "keep-previews", Clear: func(c ClearCandidate) (bool, string) { return !previewed(c.Result), "" }}
}

// clearedRounds applies pol to a fresh view of conv's only turn and
// returns the view and which rounds show their result cleared.
func clearedRounds(t *testing.T, conv *harness.Conversation, pol *CompactPolicy) (*harness.View, map[int]bool) {
	t.Helper()
	v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
	if err := pol.ApplyView(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	out := map[int]bool{}
	for _, o := range v.Origins {
		if o.Result != nil {
			out[o.Round] = compactCleared(o)
		}
	}
	return v, out
}

func TestCompactClearFromTakesOnlyResultsOfItsSize(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	for _, tc := range []struct {
		name      string
		from      int
		sizes     []int
		pointer   int // a round whose small result points at round 2 (0: none)
		wantSmall bool
		wantBig   bool
		wantBy    string
	}{
		{"zero takes every result", 0, alternating(30, 150, 1000), 0, true, true, compactName},
		{"small results stay whole", 400, alternating(30, 150, 1000), 0, false, true, "compact clear-from 400"},
		{"a small pointer is taken", 400, alternating(30, 150, 1000), 5, false, true, "compact clear-from 400"},
		{"above every result: nothing", 5000, alternating(30, 150, 1000), 0, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := sizedConv(tc.sizes)
			if tc.pointer > 0 {
				res := conv.Turns[0].Rounds[tc.pointer-1].Results[0]
				res.Cuts = []harness.Cut{{Kind: harness.CutDeduped, By: "collapse", Of: "call_t1_r2", Refs: []string{"call_t1_r2"}}}
			}
			pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, ClearOld: 1000, ClearOldKeepRounds: 3, Rule: sizeRule(tc.from)}
			_, got := clearedRounds(t, conv, pol)
			for r := 1; r <= len(tc.sizes); r++ {
				want := tc.wantBig
				if tc.sizes[r-1] < tc.from || tc.from == 0 {
					want = tc.wantSmall || (tc.from == 0 && tc.wantBig)
				}
				if r == tc.pointer {
					want = true
				}
				if r > len(tc.sizes)-3 {
					want = false // the newest 3 rounds are kept
				}
				if got[r] != want {
					t.Errorf("round %d (%d tokens) cleared %v, want %v", r, tc.sizes[r-1], got[r], want)
				}
			}
			var by []string
			for _, n := range conv.Notes {
				by = append(by, n.By)
			}
			if want := tc.wantBy; (want == "" && len(by) != 0) || (want != "" && (len(by) != 1 || by[0] != want)) {
				t.Fatalf("notes by %q, want one by %q", by, want)
			}
		})
	}
}

// Only what a clear from a size takes counts towards ClearOld: many small
// results that add up to more than it do not trigger a clear that would
// leave them whole.
func TestCompactClearFromTriggerCountsOnlyWhatItTakes(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = 300 // 36 old ones: about 9,000 tokens to clear
	}
	sizes[3], sizes[9] = 1500, 1500 // 3,000 of them in results of 1,500
	for _, tc := range []struct {
		from  int
		clear bool
	}{{0, true}, {1000, false}} {
		conv := sizedConv(sizes)
		pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, ClearOld: 6000, ClearOldKeepRounds: 3, Rule: sizeRule(tc.from)}
		if _, _ = clearedRounds(t, conv, pol); conv.Clears() != tc.clear {
			t.Errorf("ClearFrom %d: cleared %v, want %v", tc.from, conv.Clears(), tc.clear)
		}
	}
}

// Every later view reproduces a clear from a size byte for byte, whatever
// the options of the policy building it: the threshold is in the mark.
// The window's clear then takes the small results too.
func TestCompactClearFromLaterViewsAreIdentical(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	sizes := alternating(40, 150, 1000)
	conv := sizedConv(sizes[:30])
	pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, ClearOld: 1000, ClearOldKeepRounds: 3, Rule: sizeRule(400)}
	if _, got := clearedRounds(t, conv, pol); !got[2] || got[1] {
		t.Fatalf("the first clear took rounds 1, 2: %v, %v; want false, true", got[1], got[2])
	}
	full := sizedConv(sizes)
	conv.Turns[0].Rounds = append(conv.Turns[0].Rounds, full.Turns[0].Rounds[30:]...)
	// No new clear: only the recorded one is reproduced.
	quiet := func(from int) *CompactPolicy {
		return &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, NoClearOld: true, Rule: sizeRule(from)}
	}
	a, _ := clearedRounds(t, conv, quiet(400))
	b, got := clearedRounds(t, conv, quiet(0))
	c, _ := clearedRounds(t, conv, quiet(400))
	if viewJSON(a) != viewJSON(b) || viewJSON(a) != viewJSON(c) {
		t.Fatal("two later views differ")
	}
	if got[1] || !got[2] || got[29] || got[30] {
		t.Fatalf("later views cleared rounds 1, 2, 29, 30: %v %v %v %v; want false true false false", got[1], got[2], got[29], got[30])
	}
	// The window's clear takes every result, small ones before the mark too.
	window := int(float64(viewTokens(t, a)) / 0.8)
	_, got = clearedRounds(t, conv, &CompactPolicy{Unbounded: true, Window: window, Counter: counter, NoClearOld: true, Rule: sizeRule(400)})
	if !got[1] || !got[3] {
		t.Fatalf("the window's clear left small rounds 1, 3 whole: %v %v", got[1], got[3])
	}
	if n := conv.Notes[len(conv.Notes)-1]; n.By != compactName {
		t.Fatalf("the window's mark is by %q, want %q", n.By, compactName)
	}
}

// The savings bank prices the view after a clear from a size as it would
// be sent: the small results whole, the big ones cleared, and the view
// the policy is building left as it was.
func TestCompactClearFromAfterClearKeepsTheSmallResults(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	sizes := alternating(20, 150, 1000)
	conv := sizedConv(sizes)
	cfg, err := (&CompactPolicy{Window: 1 << 22, Counter: counter, Rule: sizeRule(400)}).config()
	if err != nil {
		t.Fatal(err)
	}
	v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
	before := viewJSON(v)
	c := newCompaction(context.Background(), v, cfg)
	c.rule = markRule{rule: cfg.own}
	hv := c.afterClear(compactPos{1, 17})
	if viewJSON(v) != before || len(conv.Notes) != 0 {
		t.Fatal("afterClear changed the view or the conversation")
	}
	for i, o := range hv.Origins {
		if o.Result == nil || o.Round > 17 {
			continue
		}
		big := sizes[o.Round-1] >= 400
		if compactCleared(o) != big {
			t.Errorf("round %d (%d tokens): cleared %v in the priced view, want %v: %.40q", o.Round, sizes[o.Round-1], compactCleared(o), big, hv.Messages[i].Text())
		}
	}
	if n := hv.Conversation.Notes; len(n) != 1 || n[0].By != "compact clear-from 400" {
		t.Fatalf("the priced view's mark: %+v", n)
	}
}

func TestClearRuleOfItsMark(t *testing.T) {
	cfg, err := (&CompactPolicy{Rule: sizeRule(500), Rules: []ClearRule{previewRule(), {Name: "keep small", Clear: func(ClearCandidate) (bool, string) { return true, "" }}}}).config()
	if err != nil {
		t.Fatal(err)
	}
	own, preview, small := cfg.own, &cfg.rules[0], &cfg.rules[1]
	for _, tc := range []struct {
		by   string
		want markRule
	}{
		{compactName, markRule{}},
		{"", markRule{}},
		{markRule{rule: own}.by(), markRule{rule: own}},
		{markRule{rule: preview}.by(), markRule{rule: preview}},
		{"compact keep small", markRule{rule: small}},
		{"compact keep small all", markRule{rule: small, all: true}},
		{"compact  keep   small ", markRule{rule: small}},
		{markRule{}.by(), markRule{}},
		{markRule{all: true}.by(), markRule{all: true}},
		{"compact all", markRule{all: true}},
		{"compact unknown rule", markRule{}},
		{"other clear-from 500", markRule{}},
		// The old words, of a rule no Rule names.
		{"compact clear-from 12", markRule{from: 12}},
		{"compact keep-previews clear-from 12", markRule{from: 12, keepPreviews: true}},
		{"compact clear-from 500 keep-previews", markRule{from: 500, keepPreviews: true}},
		{"compact clear-from x", markRule{}},
		{"compact clear-from", markRule{}},
		{"compact clear-from -3", markRule{}},
		{"compact clear-from 0", markRule{}},
		{"compact clear-from 12 keep-everything", markRule{}},
		{"compact clear-from 12 all", markRule{from: 12, all: true}},
		{"compact all clear-from 12", markRule{from: 12, all: true}},
	} {
		if got := cfg.ruleOf(tc.by); got != tc.want {
			t.Errorf("ruleOf(%q) = %+v, want %+v", tc.by, got, tc.want)
		}
	}
}

func TestCompactRuleErrors(t *testing.T) {
	v := harness.BuildView(compactConv([]int{2}, 10), nil, "sys", nil, false)
	take := func(ClearCandidate) (bool, string) { return true, "" }
	for _, tc := range []struct {
		pol  *CompactPolicy
		want string
	}{
		{&CompactPolicy{Rule: ClearRule{Name: "x"}}, `compact: Rule "x" has no Clear`},
		{&CompactPolicy{Rule: ClearRule{Clear: take}}, `compact: Rule's Name "" is not words separated by single spaces`},
		{&CompactPolicy{Rule: ClearRule{Name: "a  b", Clear: take}}, `compact: Rule's Name "a  b" is not words`},
		{&CompactPolicy{Rules: []ClearRule{{Name: "keep all", Clear: take}}}, `compact: Rules[0]'s Name "keep all" ends in "all"`},
	} {
		if err := tc.pol.ApplyView(context.Background(), v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want one with %q", err, tc.want)
		}
	}
}

// A transcript stored before rules were named, its marks in the old words
// (testdata/oldmarks.json: the marks and the view the policy built from
// them then), gives the same view byte for byte: read by the old words, and
// by rules of those names.
func TestCompactOldMarksReadAlike(t *testing.T) {
	var fixture struct {
		Marks []struct {
			By          string
			Turn, Round int
		}
		View json.RawMessage
	}
	b, err := os.ReadFile("testdata/oldmarks.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	counter := tokens.NewCache(o200k(t), nil)
	both := ClearRule{Name: "clear-from 400 keep-previews", Clear: func(c ClearCandidate) (bool, string) { return c.Tokens() >= 400 && !previewed(c.Result), "" }}
	for _, tc := range []struct {
		name  string
		rules []ClearRule
	}{
		{"the old words", nil},
		{"rules of their names", []ClearRule{sizeRule(400), previewRule(), both}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := sizedConv(alternating(30, 150, 1000))
			for _, r := range []int{14, 22} {
				conv.Turns[0].Rounds[r-1].Results[0].Cuts = []harness.Cut{{Kind: harness.CutSpilled, By: "result"}}
			}
			for _, m := range fixture.Marks {
				conv.Notes = append(conv.Notes, &harness.Note{By: m.By, ClearTurn: m.Turn, ClearRound: m.Round})
			}
			v := harness.BuildView(conv, conv.Turns[0], "sys", nil, false)
			pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, NoClearOld: true, NoClearWhenIdle: true, Rules: tc.rules}
			if err := pol.ApplyView(context.Background(), v); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, fixture.View); err != nil {
				t.Fatal(err)
			}
			if got := viewJSON(v); got != want.String() {
				t.Fatalf("the view differs from the one the old marks gave:\n%.600s\nwant\n%.600s", got, want.String())
			}
		})
	}
}

// KeepPreviews leaves the results a ceiling cut to a preview whole in a
// clear for cost; a policy without it reproduces the clear alike.
func TestCompactKeepPreviews(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	previews := map[int]harness.CutKind{2: harness.CutSpilled, 7: harness.CutTruncated, 9: harness.CutTrimmed}
	for _, tc := range []struct {
		name   string
		rule   ClearRule
		whole  []int // old rounds left whole
		wantBy string
	}{
		{"off: every old result", ClearRule{}, nil, compactName},
		{"on: spilled and truncated stay", previewRule(), []int{2, 7}, "compact keep-previews"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := sizedConv(alternating(30, 600, 600))
			for r, kind := range previews {
				conv.Turns[0].Rounds[r-1].Results[0].Cuts = []harness.Cut{{Kind: kind, By: "result"}}
			}
			pol := &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, ClearOld: 1000, ClearOldKeepRounds: 3, Rule: tc.rule}
			first, got := clearedRounds(t, conv, pol)
			for r := 1; r <= 27; r++ {
				if want := !slices.Contains(tc.whole, r); got[r] != want {
					t.Errorf("round %d cleared %v, want %v", r, got[r], want)
				}
			}
			if n := len(conv.Notes); n != 1 || conv.Notes[0].By != tc.wantBy {
				t.Fatalf("notes %+v, want one by %q", conv.Notes, tc.wantBy)
			}
			again, _ := clearedRounds(t, conv, &CompactPolicy{Unbounded: true, Window: 1 << 22, Counter: counter, NoClearOld: true})
			if viewJSON(first) != viewJSON(again) {
				t.Fatal("a later view differs")
			}
		})
	}
}

// A whole run through the agent: with ClearFrom or KeepPreviews every
// clear for cost leaves the small or previewed results whole in every
// later request, each cleared result shows the same placeholder from its
// clear on, and the prompt prefix changes only at the clears.
func TestCompactClearRulesHoldInEveryLaterRequest(t *testing.T) {
	counter := tokens.NewCache(o200k(t), nil)
	// odd parts are cut by the guard: to a small result, or to a preview.
	odd := func(c *harness.ToolCall) bool {
		var a struct{ Path string }
		_ = json.Unmarshal(c.Args, &a)
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(a.Path, "part"), ".txt"))
		return n%2 == 1
	}
	small := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			if odd(c) {
				return harness.TextResult(filler(len(c.Args), 150)), nil
			}
			return next(ctx, c)
		}
	}
	preview := func(next harness.ToolFunc) harness.ToolFunc {
		return func(ctx context.Context, c *harness.ToolCall) (*harness.ToolResult, error) {
			res, err := next(ctx, c)
			if err == nil && odd(c) {
				res.Model = []harness.Part{harness.TextPart(filler(len(c.Args), 600))}
				res.Cuts = []harness.Cut{{Kind: harness.CutTruncated, By: "result"}}
			}
			return res, err
		}
	}
	for _, tc := range []struct {
		name  string
		pol   *CompactPolicy
		guard harness.Guard
	}{
		{"ClearFrom", &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: counter, Rule: sizeRule(400)}, small},
		{"KeepPreviews", &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: counter, Rule: previewRule()}, preview},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs, evs, notes, _ := clearOldRun(t, 60, 1500, tc.pol, tc.guard)
			if len(evs) < 2 {
				t.Fatalf("%d clears, want at least two (a reproduced ruled mark and a new one)", len(evs))
			}
			want := compactName + " " + tc.pol.Rule.Name
			for _, n := range notes {
				if n.By != want {
					t.Fatalf("a mark by %q, want %q", n.By, want)
				}
			}
			shown := map[string]string{}
			breaks := 0
			for i, req := range reqs {
				if i > 0 {
					a, _ := json.Marshal(reqs[i-1].Messages)
					b, _ := json.Marshal(req.Messages)
					if !strings.HasPrefix(string(b), strings.TrimSuffix(string(a), "]")) {
						breaks++
					}
				}
				call := map[string]harness.ToolCall{}
				for _, m := range req.Messages {
					for _, c := range m.ToolCalls {
						call[c.ID] = c
					}
					if m.Role != harness.RoleTool {
						continue
					}
					cleared := strings.HasPrefix(m.Text(), "[cleared")
					if c := call[m.ToolCallID]; cleared && odd(&c) {
						t.Fatalf("request %d: the cut result of %s was cleared for cost", i, c.Args)
					}
					if prev, ok := shown[m.ToolCallID]; ok && prev != m.Text() {
						t.Fatalf("request %d: call %s shown two ways after its clear", i, m.ToolCallID)
					}
					if cleared {
						shown[m.ToolCallID] = m.Text()
					}
				}
			}
			if breaks != len(evs) {
				t.Fatalf("%d cache breaks for %d clears", breaks, len(evs))
			}
		})
	}
}

// FuzzClearRuleOf checks the mark's rule parser: any By reads as a rule
// whose own By reads back as the same rule (so a mark means one thing),
// and every rule survives the round trip.
func FuzzClearRuleOf(f *testing.F) {
	for _, s := range []string{"", compactName, "compact clear-from 500", "compact keep-previews", "compact clear-from 7 keep-previews",
		"compact keep-previews clear-from 7", "compact clear-from", "compact clear-from -1", "compact clear-from 99999999999999999999", "result", " compact  clear-from  3 ",
		"compact named rule", "compact named rule all", "compact all all"} {
		f.Add(s, 0, false)
	}
	f.Add("", 1000, true)
	take := func(ClearCandidate) (bool, string) { return true, "" }
	cfg, err := (&CompactPolicy{Rule: ClearRule{Name: "named rule", Clear: take}, Rules: []ClearRule{{Name: "clear-from 7", Clear: take}}}).config()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, by string, from int, keep bool) {
		r := cfg.ruleOf(by)
		if r.from < 0 {
			t.Fatalf("ruleOf(%q) has a negative size %d", by, r.from)
		}
		if again := cfg.ruleOf(r.by()); again != r {
			t.Fatalf("ruleOf(%q) = %+v, whose By %q reads as %+v", by, r, r.by(), again)
		}
		if from > 0 && from != 7 {
			if w := (markRule{from: from, keepPreviews: keep}); cfg.ruleOf(w.by()) != w {
				t.Fatalf("%+v does not survive its By %q", w, w.by())
			}
		}
	})
}

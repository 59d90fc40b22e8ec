package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/stack"
)

// TestBudgetOnArrival: the results that arrive together share the turn's
// remaining budget by water-filling; a later request carries them
// byte-identical and its new result gets only what the turn has left (the
// floor); the proxy causes no cache break.
func TestBudgetOnArrival(t *testing.T) {
	const budget, floor = 10_000, 1_200
	body := strings.Repeat("a line of build output that the model may or may not need\n", 140) // 8,260 chars
	for _, wc := range wireCases {
		t.Run(wc.name, func(t *testing.T) {
			// The run ceiling would cut these build logs first: the test is the budget's.
			r := newRig(t, &Options{Stack: &stack.Config{NoRunCeiling: true, TurnBudget: &policy.TurnBudget{Chars: budget, MinKeep: floor}}})
			const model, prompt = "test-model", "What failed in the build?"
			a := step{id: "call_a", tool: "shell", args: `{"command":"make a"}`, result: body}
			b := step{id: "call_b", tool: "shell", args: `{"command":"make b"}`, result: body}
			c := step{id: "call_c", tool: "shell", args: `{"command":"make c"}`, result: body}
			u := wiretest.Usage{Input: 100, Output: 5}
			r.up.Enqueue(wc.reply(model, "", nil, u), wc.reply(model, "", nil, u), wc.reply(model, "done", nil, u))
			for i, steps := range [][]step{nil, {a, b}, {a, b, c}} {
				if status, _, got := r.post(wc.path, wc.body(model, prompt, steps), nil); status != 200 {
					t.Fatalf("request %d: status %d: %s", i+1, status, got)
				}
			}
			if err := r.px.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			reqs := r.up.Requests()
			c2, c3 := contents(t, wc.format, reqs[1].Body), contents(t, wc.format, reqs[2].Body)
			total := 0
			for i, raw := range c2 {
				n := shownChars(t, raw)
				t.Logf("result %d: %d chars shown", i+1, n)
				total += n
				if n >= len(body) || n < floor {
					t.Errorf("result %d of request 2 shows %d chars, want cut to its share (floor %d)", i+1, n, floor)
				}
				if c3[i] != raw {
					t.Errorf("result %d changed between requests 2 and 3", i+1)
				}
			}
			if total > budget {
				t.Errorf("request 2 shows %d chars of evidence, over the %d budget", total, budget)
			}
			t.Logf("late result: %d chars shown", shownChars(t, c3[2]))
			if n := shownChars(t, c3[2]); n > floor+200 {
				t.Errorf("the late result shows %d chars, want about the %d floor (the turn's budget is spent)", n, floor)
			}
			if !strings.Contains(c3[2], "evidence budget") {
				t.Errorf("the late result carries no budget marker: %.300s", c3[2])
			}
			// No recall tool behind the proxy: each trim names a spill
			// file holding the result whole.
			for i, raw := range c3 {
				p := spillPathRE.FindString(raw)
				if p == "" || strings.Contains(raw, "call id") {
					t.Errorf("trimmed result %d names no spill file: %.300s", i+1, raw[max(0, len(raw)-300):])
					continue
				}
				if whole, err := os.ReadFile(p); err != nil || string(whole) != body {
					t.Errorf("trimmed result %d: the spill file %s does not hold it whole (%v)", i+1, p, err)
				}
			}
			if s := r.px.Stats(); s.CacheBreaks != 0 || s.ResultsCut != 3 {
				t.Errorf("stats: %d cache breaks, %d results cut; want 0 and 3", s.CacheBreaks, s.ResultsCut)
			}
		})
	}
}

// shownChars decodes a content value (a JSON string, or blocks holding
// text) and counts the characters the model is shown.
func shownChars(t *testing.T, raw string) int {
	t.Helper()
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err == nil {
		return utf8.RuneCountInString(s)
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(raw))).Decode(&blocks); err != nil {
		t.Fatalf("content is neither a string nor text blocks: %.200s", raw)
	}
	n := 0
	for _, b := range blocks {
		n += utf8.RuneCountInString(b.Text)
	}
	return n
}

// TestBudgetRoundLimit: the turn's budget is shared by its first
// harness.DefaultMaxRounds rounds, as the engine's OnArrival shares it;
// the results of the later rounds of a long turn (a coding session) reach
// the model whole rather than each at the floor, and the cache is never
// broken.
func TestBudgetRoundLimit(t *testing.T) {
	const budget, floor = 10_000, 1_200
	// Distinct bodies of 8,120+ chars, so that Collapse leaves them alone.
	bodyOf := func(i int) string {
		return strings.Repeat(fmt.Sprintf("round %02d: a line of build output the model may need\n", i), 140)
	}
	const rounds = harness.DefaultMaxRounds + 2
	for _, wc := range wireCases {
		t.Run(wc.name, func(t *testing.T) {
			r := newRig(t, &Options{Stack: &stack.Config{NoRunCeiling: true, TurnBudget: &policy.TurnBudget{Chars: budget, MinKeep: floor}}})
			const model, prompt = "test-model", "What failed in the build?"
			var steps []step
			u := wiretest.Usage{Input: 100, Output: 5}
			for i := 0; i <= rounds; i++ {
				r.up.Enqueue(wc.reply(model, "", nil, u))
				if status, _, got := r.post(wc.path, wc.body(model, prompt, steps), nil); status != 200 {
					t.Fatalf("request %d: status %d: %s", i+1, status, got)
				}
				steps = append(steps, step{id: fmt.Sprintf("call_%d", i+1), tool: "shell", args: fmt.Sprintf(`{"command":"make %d"}`, i+1), result: bodyOf(i + 1)})
			}
			if err := r.px.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			reqs := r.up.Requests()
			last := contents(t, wc.format, reqs[len(reqs)-1].Body)
			if len(last) != rounds {
				t.Fatalf("the last request carries %d results, want %d", len(last), rounds)
			}
			// Round 1 fits the budget whole; each round after it up to the
			// limit gets what is left, then the floor; the rounds after the
			// limit are whole.
			shown := 0
			for i, raw := range last {
				n, whole := shownChars(t, raw), len(bodyOf(i+1))
				switch {
				case i == 0 && n != whole:
					t.Errorf("round 1 shows %d chars, want all %d (it fits the budget)", n, whole)
				case i > 0 && i < harness.DefaultMaxRounds && (n >= whole || n < floor || n > budget-whole):
					t.Errorf("round %d shows %d chars, want cut to what the budget has left, at least the %d floor", i+1, n, floor)
				case i >= harness.DefaultMaxRounds && n != whole:
					t.Errorf("round %d, after the round limit, shows %d chars, want all %d", i+1, n, whole)
				}
				if i < harness.DefaultMaxRounds {
					shown += n
				}
			}
			if limit := budget + (harness.DefaultMaxRounds-2)*floor; shown > limit {
				t.Errorf("the first %d rounds show %d chars, over the budget and a floor for each round after it ran out (%d)", harness.DefaultMaxRounds, shown, limit)
			}
			if s := r.px.Stats(); s.CacheBreaks != 0 || s.ResultsCut != harness.DefaultMaxRounds-1 {
				t.Errorf("stats: %d cache breaks, %d results cut; want 0 and %d", s.CacheBreaks, s.ResultsCut, harness.DefaultMaxRounds-1)
			}
		})
	}
}

// TestIdleClearKeepsBudgetSpill: a result the turn budget trimmed already
// has a file holding it whole; the idle clear's placeholder names that
// file instead of writing a second one.
func TestIdleClearKeepsBudgetSpill(t *testing.T) {
	opts := &Options{Stack: &stack.Config{NoRunCeiling: true, TurnBudget: &policy.TurnBudget{Chars: 4000, MinKeep: 600}}}
	x := newIdleRun(t, wireCases[0], opts, nil)
	x.warmUp()
	before := x.shownResults(x.r.up.Requests()[7].Body)
	files := spillFiles(t, x.r.ws)
	shown := x.shownResults(x.send(8, 6*time.Minute))
	checked := 0
	for i, s := range shown[:min(len(before), len(shown))] {
		trimmed := spillPathRE.FindString(before[i])
		if trimmed == "" || !strings.Contains(before[i], "evidence budget") || !strings.HasPrefix(s, "[harness proxy: cleared") {
			continue
		}
		checkPlaceholder(t, s, x.steps[i])
		if m := idlePathRE.FindStringSubmatch(s); m == nil || m[1] != trimmed {
			t.Errorf("result %d: the placeholder names %v, want the budget's spill file %s", i+1, m, trimmed)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no result both trimmed by the budget and cleared")
	}
	if err := x.r.px.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range spillFiles(t, x.r.ws) {
		if !slices.Contains(files, f) {
			for i, s := range before {
				if spillPathRE.FindString(s) != "" && strings.Contains(f, x.steps[i].id+"-") {
					t.Errorf("the clear wrote %s for result %d, which the budget had spilled", f, i+1)
				}
			}
		}
	}
}

// spillFiles lists the files under the workspace's spill folder.
func spillFiles(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(ws, ".harness", "spill"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

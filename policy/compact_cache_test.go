package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentharness/harness/internal/clearnote"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// TestPlaceholdersAreRenderedOnce checks that a cleared result shows the
// very same placeholder string in every later request (so its count is
// found by identity, not rendered and counted again), and that a fresh
// policy renders the same text. The bank is off (Unbounded): this run
// saves nothing on arrival, and the test is about the clears it makes.
func TestPlaceholdersAreRenderedOnce(t *testing.T) {
	const n, size = 40, 1500
	reqs, evs, _, _ := clearOldRun(t, n, size, &CompactPolicy{Window: 1 << 20, Unbounded: true, Counter: tokens.NewCache(o200k(t), nil)})
	if len(evs) == 0 {
		t.Fatal("nothing cleared")
	}
	placeholders := func(req *harness.Request) map[string]string {
		out := map[string]string{}
		for _, m := range req.Messages {
			if m.Role == harness.RoleTool && strings.HasPrefix(m.Text(), "[cleared") {
				out[m.ToolCallID] = m.Text()
			}
		}
		return out
	}
	last, before := placeholders(reqs[len(reqs)-1]), placeholders(reqs[len(reqs)-2])
	if len(before) == 0 {
		t.Fatal("no placeholder in the last requests")
	}
	same := 0
	for id, text := range before {
		if got, ok := last[id]; ok {
			if got != text {
				t.Errorf("%s: placeholder changed between requests:\n%s\n%s", id, text, got)
			}
			if unsafe.StringData(got) == unsafe.StringData(text) {
				same++
			}
		}
	}
	if same != len(before) {
		t.Errorf("%d of %d placeholders re-rendered instead of reused", len(before)-same, len(before))
	}
	// A fresh policy (empty cache) renders the same requests.
	again, _, _, _ := clearOldRun(t, n, size, &CompactPolicy{Window: 1 << 20, Unbounded: true, Counter: tokens.NewCache(o200k(t), nil)})
	for id, text := range placeholders(again[len(again)-1]) {
		if last[id] != text {
			t.Errorf("%s: %q, fresh policy %q", id, last[id], text)
		}
	}
}

// TestMeasureMemoIsExact checks that counts reused from the last view are
// exactly CountMessage's, when the view grows at its end, when a note
// message is inserted near its top, when a message changes in place and
// when one is removed; and that only changed messages are recounted.
func TestMeasureMemoIsExact(t *testing.T) {
	c := tokens.NewCache(o200k(t), nil)
	msg := func(role harness.Role, text string) harness.Message {
		return harness.Message{Role: role, Parts: []harness.Part{harness.TextPart(text)}}
	}
	base := []harness.Message{msg(harness.RoleSystem, "system prompt"), msg(harness.RoleUser, "task")}
	for i := range 6 {
		base = append(base, msg(harness.RoleAssistant, fmt.Sprintf("thinking about step %d", i)), msg(harness.RoleTool, strings.Repeat("result line\n", i+1)))
	}
	grown := append(slices.Clone(base), msg(harness.RoleAssistant, "one more"))
	noted := slices.Insert(slices.Clone(grown), 1, msg(harness.RoleUser, clearnote.Text))
	changed := slices.Clone(noted)
	changed[5] = msg(harness.RoleTool, "[cleared]")
	removed := slices.Delete(slices.Clone(changed), 1, 2)
	var mm measureMemo
	conv := harness.NewConversation("m")
	for _, tc := range []struct {
		name    string
		msgs    []harness.Message
		counted int // messages the memo must count anew
	}{
		{"first", base, len(base)},
		{"grown", grown, 1},
		{"note inserted", noted, 1},
		{"changed in place", changed, 1},
		{"note removed", removed, 0},
	} {
		counted := 0
		got := mm.counts(conv, tc.msgs, func(m *harness.Message) int { counted++; return tokens.CountMessage(c, m) })
		for i := range tc.msgs {
			if want := tokens.CountMessage(c, &tc.msgs[i]); got[i] != want {
				t.Errorf("%s: message %d counted %d, want %d", tc.name, i, got[i], want)
			}
		}
		if counted != tc.counted {
			t.Errorf("%s: counted %d messages anew, want %d", tc.name, counted, tc.counted)
		}
	}
}

// TestChooseInOnePassIsPerCandidate checks that the one-pass walk over
// the candidate rounds gives exactly what a clearing pass per candidate
// gives (the mark, the tokens saved, the results cleared), for needs
// from one round to all of them, after an earlier mark and without one,
// on a view with results of varying size across turns.
func TestChooseInOnePassIsPerCandidate(t *testing.T) {
	conv := compactConv([]int{7, 12, 9}, 300)
	for i, turn := range conv.Turns {
		for j, r := range turn.Rounds {
			if (i+j)%4 == 0 { // some results no longer than a placeholder
				r.Results[0].Parts = []harness.Part{harness.TextPart("ok")}
				r.Results[0].Bytes = 2
			}
		}
	}
	p := &CompactPolicy{Unbounded: true, Window: 1 << 20, Counter: tokens.NewCache(o200k(t), nil)}
	cfg, err := p.config()
	if err != nil {
		t.Fatal(err)
	}
	for _, mark := range []compactPos{{}, {1, 5}, {2, 3}} {
		for _, need := range []float64{1, 500, 2_000, 6_000, 1e9} {
			v := harness.BuildView(conv, conv.Turns[2], "sys", nil, false)
			c := newCompaction(t.Context(), v, cfg)
			items, release := cfg.placeholders.open(conv)
			c.items = items
			if mark != (compactPos{}) {
				c.clearThrough(mark)
			}
			var all []compactPos
			for i := range v.Messages {
				if q, ok := c.resultPos(i); ok && (len(all) == 0 || all[len(all)-1] != q) {
					all = append(all, q)
				}
			}
			candidates := all[:len(all)-3]
			first := c.firstAfter(candidates, mark)
			gotMark, gotSaved, gotCleared := c.chooseInOnePass(candidates[first:], mark, need, 0)
			wantMark, wantSaved, wantCleared := mark, 0.0, 0
			for _, q := range candidates {
				if !mark.less(q) {
					continue
				}
				if wantSaved >= need {
					break
				}
				idx, s := c.clearing(q)
				wantMark, wantSaved, wantCleared = q, s, len(idx)
			}
			release()
			if need == 1e9 && wantCleared < 10 {
				t.Errorf("mark %v: %d results to clear, the test checks little", mark, wantCleared)
			}
			if gotMark != wantMark || gotSaved != wantSaved || gotCleared != wantCleared {
				t.Errorf("mark %v need %.0f: one pass %v %.3f %d, per candidate %v %.3f %d", mark, need, gotMark, gotSaved, gotCleared, wantMark, wantSaved, wantCleared)
			}
		}
	}
}

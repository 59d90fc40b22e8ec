package policy

import (
	"github.com/agentharness/harness"
)

// defaultCompactActiveRounds is ActiveRounds' default (see
// CompactPolicy.NoKeepActive).
const defaultCompactActiveRounds = 3

// activeState is one conversation's memory for the working-set rule
// (CompactPolicy.NoKeepActive): what it reads of the transcript never
// changes once read, so it is read once.
type activeState struct {
	pass int // the compaction pass that last brought first up to date
	// first is the round each word of the agent's messages first appears
	// in; seen lists the rounds it holds.
	first map[string]compactPos
	seen  map[*harness.Round]bool
	// words are the words of each result's model copy.
	words map[*harness.ToolResult]map[string]bool
	// windows are the words of each mark's window (see activeWindow), with the
	// newest round of it using each; verdicts are keptAt's answers. Both
	// are recomputed after a reset (maxActiveMarks).
	windows  map[compactPos]map[string]compactPos
	verdicts map[activeKey]bool
}

type activeKey struct {
	res  *harness.ToolResult
	mark compactPos
}

// maxActiveMarks bounds the windows an activeState remembers (each view
// asks about a new pending mark); past it they are forgotten and
// recomputed, alike, when asked again.
const maxActiveMarks = 64

// activeOf returns the conversation's working-set memory, a fresh one when
// the compaction has no conversation entries.
func (c *compaction) activeOf() *activeState {
	if c.items == nil {
		if c.act == nil {
			c.act = &activeState{}
		}
		return c.act
	}
	if c.items.active == nil {
		c.items.active = &activeState{}
	}
	return c.items.active
}

// keptActive reports whether a clear through mark leaves the result that
// message i shows whole under the working-set rule: the result is at or
// before mark and, at mark and at every recorded mark at or after it
// (once a clear takes a result, it stays cleared), the agent quoted it in
// the window of that mark (see activeAt) and the mark was not forced.
func (c *compaction) keptActive(i int, mark compactPos) bool {
	if c.active <= 0 || c.rule.all {
		return false
	}
	pos, ok := c.resultPos(i)
	if !ok || mark.less(pos) {
		return false
	}
	res, forced := c.v.Origins[i].Result, c.forcedMarks()
	for _, n := range c.v.Conversation.Notes {
		if n == nil || n.ClearTurn == 0 {
			continue
		}
		// A mark between the result and this one took it if it took
		// everything (a forced clear) or found it no longer quoted.
		if m := (compactPos{n.ClearTurn, n.ClearRound}); !m.less(pos) && m.less(mark) && (forced[m] || !c.activeAt(res, pos, m)) {
			return false
		}
	}
	return c.activeAt(res, pos, mark)
}

// forcedMarks returns the positions of the conversation's marks whose rule
// took the working set too (a forced clear), read from the notes once per
// compaction pass and after each commit rather than once per result.
func (c *compaction) forcedMarks() map[compactPos]bool {
	if c.forced != nil {
		return c.forced
	}
	c.forced = map[compactPos]bool{}
	for _, n := range c.v.Conversation.Notes {
		if n != nil && n.ClearTurn != 0 && c.ruleOf(n.By).all {
			c.forced[compactPos{n.ClearTurn, n.ClearRound}] = true
		}
	}
	return c.forced
}

// activeAt reports whether a word of res's model copy (the quoted-word
// rule: see quotedWords and messageWords) is used in an assistant message
// of the window of mark, after pos, and in none up to pos (the call that
// made the result names its own pattern or path, which every line of it
// may hold). The answer depends only on the rounds up to the window's end,
// all there when a clear through mark is decided, so every later view
// gives the same one.
func (c *compaction) activeAt(res *harness.ToolResult, pos, mark compactPos) bool {
	st := c.activeOf()
	key := activeKey{res, mark}
	if v, ok := st.verdicts[key]; ok {
		return v
	}
	c.readFirst(st)
	win, complete := c.activeWindow(st, mark)
	words := st.words[res]
	if words == nil {
		words = map[string]bool{}
		quotedWords(res.ModelText(), false, func(w string) bool { words[w] = true; return true })
		if st.words == nil {
			st.words = map[*harness.ToolResult]map[string]bool{}
		}
		st.words[res] = words
	}
	found := false
	for w, at := range win {
		if pos.less(at) && pos.less(st.first[w]) && words[w] {
			found = true
			break
		}
	}
	if !complete {
		return found
	}
	if st.verdicts == nil || len(st.verdicts) >= maxActiveMarks<<8 {
		st.verdicts = map[activeKey]bool{}
	}
	st.verdicts[key] = found
	return found
}

// readFirst brings st.first up to the conversation's rounds, once a pass.
func (c *compaction) readFirst(st *activeState) {
	pass := -1
	if c.items != nil {
		pass = c.items.pass
	}
	if pass >= 0 && st.pass == pass {
		return
	}
	st.pass = pass
	if st.first == nil {
		st.first, st.seen = map[string]compactPos{}, map[*harness.Round]bool{}
	}
	eachRound(c.v.Conversation, func(at compactPos, r *harness.Round) bool {
		if st.seen[r] {
			return true
		}
		st.seen[r] = true
		for _, w := range c.wordsOf(r) {
			if f, ok := st.first[w]; !ok || at.less(f) {
				st.first[w] = at
			}
		}
		return true
	})
}

// activeWindow returns the words of the assistant messages of mark's window —
// the newest c.active rounds up to the last round a clear through mark
// keeps for certain (the keptAfterMark-th round with results after it;
// see quotedBy) — each with the newest round of the window using it, and
// whether that end is in the transcript yet (a window that is not is not
// remembered).
func (c *compaction) activeWindow(st *activeState, mark compactPos) (map[string]compactPos, bool) {
	if win, ok := st.windows[mark]; ok {
		return win, true
	}
	type round struct {
		at compactPos
		r  *harness.Round
	}
	var ring []round // the newest c.active rounds read
	after := c.keptAfterMark()
	eachRound(c.v.Conversation, func(at compactPos, r *harness.Round) bool {
		if mark.less(at) {
			if after <= 0 {
				return false
			}
			if len(r.Results) > 0 {
				after--
			}
		}
		if len(ring) == c.active {
			ring = append(ring[:0], ring[1:]...)
		}
		ring = append(ring, round{at, r})
		return true
	})
	win := map[string]compactPos{}
	for _, x := range ring {
		for _, w := range c.wordsOf(x.r) {
			win[w] = x.at // rounds in order: the newest wins
		}
	}
	if after > 0 {
		return win, false
	}
	if st.windows == nil || len(st.windows) >= maxActiveMarks {
		st.windows, st.verdicts = map[compactPos]map[string]compactPos{}, nil
	}
	st.windows[mark] = win
	return win, true
}

// wordsOf is roundWords(r), remembered for the conversation when the
// compaction has its entries.
func (c *compaction) wordsOf(r *harness.Round) []string {
	if c.items != nil {
		return c.items.roundWords(r)
	}
	return roundWords(r)
}

// eachRound calls fn with every recorded round of conv and its position,
// in order, until fn returns false.
func eachRound(conv *harness.Conversation, fn func(compactPos, *harness.Round) bool) {
	for _, t := range conv.Turns {
		if t == nil {
			continue
		}
		for _, r := range t.Rounds {
			if r != nil && !fn(compactPos{t.Index, r.Index}, r) {
				return
			}
		}
	}
}

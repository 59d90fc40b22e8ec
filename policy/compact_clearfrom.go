package policy

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// clearRule says which of the results at or before a mark a clear takes
// ([CompactPolicy.ClearFrom], [CompactPolicy.KeepPreviews]); the zero
// rule takes every one, as the window's clear does.
type clearRule struct {
	// from: only results whose stored model copy counts at least this
	// many tokens (0: any size).
	from int
	// keepPreviews: not the results a ceiling cut to a preview.
	keepPreviews bool
	// all: the working set too (CompactPolicy.NoKeepActive's rule does
	// not keep it): a clear forced by a request that does not fit.
	all bool
}

// The words a clear's rule adds to the By of its mark, after compactName
// ("compact clear-from 1000 keep-previews"). A mark whose By is plain
// compactName, or has a word that does not parse, clears every result at
// or before it, as marks always have: read back wrongly, a mark clears
// more, never less, and every view still agrees.
const (
	clearFromWord    = "clear-from"
	keepPreviewsWord = "keep-previews"
	allWord          = "all"
)

// errClearFrom is the error of a negative ClearFrom.
var errClearFrom = errors.New("compact: ClearFrom is negative (zero takes results of any size)")

// by is the By of the mark a clear under r records.
func (r clearRule) by() string {
	by := compactName
	if r.from > 0 {
		by += " " + clearFromWord + " " + strconv.Itoa(r.from)
	}
	if r.keepPreviews {
		by += " " + keepPreviewsWord
	}
	if r.all {
		by += " " + allWord
	}
	return by
}

// ruleOf reads the rule of a clearing mark from its By (see by).
func ruleOf(by string) clearRule {
	f := strings.Fields(by)
	if len(f) == 0 || f[0] != compactName {
		return clearRule{}
	}
	var r clearRule
	for i := 1; i < len(f); i++ {
		switch {
		case f[i] == clearFromWord && i+1 < len(f):
			n, err := strconv.Atoi(f[i+1])
			if err != nil || n <= 0 {
				return clearRule{}
			}
			r.from = n
			i++
		case f[i] == keepPreviewsWord:
			r.keepPreviews = true
		case f[i] == allWord:
			r.all = true
		default:
			return clearRule{}
		}
	}
	return r
}

// recordedMark is a clearing mark of the transcript: its position and its
// rule.
type recordedMark struct {
	pos  compactPos
	rule clearRule
}

// reproduce clears what the conversation's marks recorded and returns the
// newest mark. A mark with the zero rule clears every result at or before
// it; one with a rule (see ruleOf) only the results its rule takes (see
// takes). So every result at or before the newest plain mark is cleared,
// then each ruled mark after it, oldest first, clears what it took when
// it was decided: the same results whatever the options of the policy
// reading the marks. Of the marks of one rule only the newest counts: it
// takes every result an older one took (it covers more rounds, and fewer
// shown results after it can pin one), so a run of many clears costs one
// pass per rule, not one per clear.
func (c *compaction) reproduce() compactPos {
	var marks []recordedMark
	full := compactPos{}
	for _, n := range c.v.Conversation.Notes {
		if n == nil || n.ClearTurn == 0 {
			continue
		}
		m := recordedMark{compactPos{n.ClearTurn, n.ClearRound}, ruleOf(n.By)}
		if m.rule == (clearRule{}) {
			full = maxPos(full, m.pos)
			continue
		}
		if i := slices.IndexFunc(marks, func(o recordedMark) bool { return o.rule == m.rule }); i >= 0 {
			marks[i].pos = maxPos(marks[i].pos, m.pos)
			continue
		}
		marks = append(marks, m)
	}
	if full != (compactPos{}) {
		c.rule = clearRule{}
		c.clearThrough(full)
	}
	slices.SortStableFunc(marks, func(a, b recordedMark) int {
		switch {
		case a.pos.less(b.pos):
			return -1
		case b.pos.less(a.pos):
			return 1
		}
		return 0
	})
	newest := full
	for _, m := range marks {
		newest = maxPos(newest, m.pos)
		if full.less(m.pos) {
			c.rule = m.rule
			c.clearThrough(m.pos)
		}
	}
	c.rule = clearRule{}
	return newest
}

func maxPos(a, b compactPos) compactPos {
	if a.less(b) {
		return b
	}
	return a
}

// takes reports whether the clear being decided or reproduced (rule
// c.rule) takes message i's result. A result that points at others is
// always taken: left whole it would point at placeholders, and keep what
// it points at from ever being cleared (see clearable). Otherwise the
// rule reads only the stored result — its model copy's size, counted
// uncalibrated, and its cuts — so every view, whatever its calibration or
// the other policies' edits, gives the same answer.
func (c *compaction) takes(i int) bool {
	r := c.rule
	if r == (clearRule{}) {
		return true
	}
	res := c.v.Origins[i].Result
	if len(pointsAt(res)) > 0 {
		return true
	}
	if r.keepPreviews && previewed(res) {
		return false
	}
	return r.from <= 0 || c.storedTokens(i, res) >= r.from
}

// previewed reports whether a ceiling cut res to a preview at arrival.
func previewed(res *harness.ToolResult) bool {
	return slices.ContainsFunc(res.Cuts, func(c harness.Cut) bool {
		return c.Kind == harness.CutSpilled || c.Kind == harness.CutTruncated
	})
}

// storedTokens counts res's stored model copy as its tool message
// (remembered with the placeholder: it depends on nothing else).
func (c *compaction) storedTokens(i int, res *harness.ToolResult) int {
	count := func() int {
		m := harness.ToolMessage(res)
		return tokens.CountMessage(c.counter, &m)
	}
	if c.items == nil {
		return count()
	}
	it := c.item(i)
	if it.stored == 0 {
		it.stored = count() + 1 // +1: 0 means not yet counted
	}
	return it.stored - 1
}

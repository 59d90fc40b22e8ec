package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// ClearRule is a rule of [CompactPolicy]'s clears: which old results a
// clear for cost (ClearOld, ClearWhenIdle) takes, and what a cleared result
// shows. The zero ClearRule is the default: every result is taken and shows
// a one-line placeholder. The window's clear always takes every result.
//
// A clear the rule decides records Name in its mark, so a view built later,
// in this process or another, asks the same rule (found by Name in the
// policy's Rule or Rules) which results that clear took. A mark whose name
// no rule has clears every result at or before it: read back wrongly, a mark
// clears more, never less, and every view still agrees. Marks in the words
// stored before rules had names ("clear-from N", "keep-previews") read as
// they were written.
type ClearRule struct {
	// Name identifies the rule in the marks: words separated by single
	// spaces, the last of which is not "all". Required when Clear is set.
	Name string
	// Clear is asked about each old result: whether a clear for cost under
	// the rule takes it (one that points at others, such as a collapse
	// marker, is always taken), and the text it shows once cleared by any
	// clear ("" is the default placeholder; the text is always the
	// policy's own Rule's). Clear must depend on the candidate alone, so
	// every view gives the same answers and the prompt cache holds.
	Clear func(ClearCandidate) (take bool, text string)
}

// ClearCandidate is what a [ClearRule] is asked about: one stored result and
// the pieces of the default placeholder, "[cleared to save context: About.
// To see it again, Back.]".
type ClearCandidate struct {
	// Result is the stored result; Result.ModelText() is what the model
	// was shown of it.
	Result *harness.ToolResult
	// About names the result: its kind, tool, arguments, call and size.
	About string
	// Back says how the model can get the result again.
	Back string
	// Tokens counts the result's model copy as a tool message, with the
	// policy's Counter, uncalibrated.
	Tokens func() int
	// Quoted lists the lines of Result.ModelText() (numbered from 0, as
	// strings.SplitAfter with "\n" splits them, less a final empty one)
	// that hold a word the agent quoted from the result: an identifier-like
	// word of it, in none of the agent's messages up to the call that made
	// it, used in one after it, up to the rounds every clear keeps after
	// the mark of the clear that first covered the result. Those rounds
	// were all there when that clear was decided, so every view lists the
	// same lines.
	Quoted func() []int
}

// markRule is the rule of a clear being decided or reproduced, as its mark
// records it; the zero markRule takes every result.
type markRule struct {
	// rule is the ClearRule the mark names (nil: none).
	rule *ClearRule
	// from and keepPreviews are the rule of a mark written in the old words
	// (see oldRuleOf).
	from         int
	keepPreviews bool
	// all: the working set too (CompactPolicy.NoKeepActive's rule does
	// not keep it): a clear forced by a request that does not fit.
	all bool
}

// The words a mark's By holds after compactName: the rule's Name, then
// allWord for a forced clear ("compact all"). A plain compactName clears
// every result at or before the mark but the working set.
const allWord = "all"

// by is the By of the mark a clear under r records.
func (r markRule) by() string {
	by := compactName
	if r.rule != nil {
		by += " " + r.rule.Name
	}
	by += r.oldWords()
	if r.all {
		by += " " + allWord
	}
	return by
}

// ruleOf reads the rule of a clearing mark from its By (see by): a rule of
// the policy by name, else the old words (see oldRuleOf), which a rule of
// the policy named as them reads instead.
func (c *compactConfig) ruleOf(by string) markRule {
	f := strings.Fields(by)
	if len(f) == 0 || f[0] != compactName {
		return markRule{}
	}
	f = f[1:]
	name, all := f, false
	if n := len(f); n > 0 && f[n-1] == allWord {
		name, all = f[:n-1], true
	}
	if len(name) > 0 {
		if r := c.lookup(strings.Join(name, " ")); r != nil {
			return markRule{rule: r, all: all}
		}
	}
	old := oldRuleOf(f)
	if r := c.lookup(strings.TrimSpace(old.oldWords())); r != nil {
		return markRule{rule: r, all: old.all} // a rule named as the old words
	}
	return old
}

// lookup is the rule of the policy named name: its Rule, else one of its
// Rules, else nil.
func (c *compactConfig) lookup(name string) *ClearRule {
	if c.own != nil && c.own.Name == name {
		return c.own
	}
	for i := range c.rules {
		if c.rules[i].Name == name {
			return &c.rules[i]
		}
	}
	return nil
}

// checkRule reports what is wrong with r as a rule of the policy, as field.
func checkRule(field string, r *ClearRule) error {
	switch f := strings.Fields(r.Name); {
	case r.Clear == nil:
		return fmt.Errorf("compact: %s %q has no Clear", field, r.Name)
	case len(f) == 0 || strings.Join(f, " ") != r.Name:
		return fmt.Errorf("compact: %s's Name %q is not words separated by single spaces", field, r.Name)
	case f[len(f)-1] == allWord:
		return fmt.Errorf("compact: %s's Name %q ends in %q, the word of a forced clear", field, r.Name, allWord)
	}
	return nil
}

// rulesOf checks p's Rule and Rules and returns the policy's own rule (nil:
// the default).
func rulesOf(p *CompactPolicy) (*ClearRule, error) {
	var own *ClearRule
	if p.Rule.Name != "" || p.Rule.Clear != nil {
		own = &p.Rule
		if err := checkRule("Rule", own); err != nil {
			return nil, err
		}
	}
	for i := range p.Rules {
		if err := checkRule(fmt.Sprintf("Rules[%d]", i), &p.Rules[i]); err != nil {
			return nil, err
		}
	}
	return own, nil
}

// recordedMark is a clearing mark of the transcript: its position and its
// rule.
type recordedMark struct {
	pos  compactPos
	rule markRule
}

// reproduce clears what the conversation's marks recorded and returns the
// newest mark. A mark with the zero rule clears every result at or before
// it; one with a rule only the results its rule takes (see takes). So every
// result at or before the newest plain mark is cleared, then each ruled mark
// after it, oldest first, clears what it took when it was decided: the same
// results whatever the options of the policy reading the marks, given the
// rules they name. Of the marks of one rule only the newest counts: it takes
// every result an older one took (it covers more rounds, and fewer shown
// results after it can pin one), so a run of many clears costs one pass per
// rule, not one per clear.
func (c *compaction) reproduce() compactPos {
	var marks []recordedMark
	full := compactPos{}
	for _, n := range c.v.Conversation.Notes {
		if n == nil || n.ClearTurn == 0 {
			continue
		}
		m := recordedMark{compactPos{n.ClearTurn, n.ClearRound}, c.ruleOf(n.By)}
		if m.rule == (markRule{}) {
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
		c.rule = markRule{}
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
	c.rule = markRule{}
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
// it points at from ever being cleared (see clearable). Otherwise the rule
// is asked: it reads only the stored result and what was there when the
// clear was decided, so every view, whatever its calibration or the other
// policies' edits, gives the same answer.
func (c *compaction) takes(i int) bool {
	r := c.rule
	if r.rule == nil && r.from == 0 && !r.keepPreviews {
		return true
	}
	res := c.v.Origins[i].Result
	if len(pointsAt(res)) > 0 {
		return true
	}
	if r.rule != nil {
		return c.ruleTakes(i, r.rule)
	}
	return r.oldTakes(res, func() int { return c.storedTokens(i, res) })
}

// ruleTakes is r's answer for message i's result: remembered with the
// placeholder when r is the policy's own rule.
func (c *compaction) ruleTakes(i int, r *ClearRule) bool {
	if r == c.own && c.items != nil {
		return c.item(i).take
	}
	stored := 0
	_, take, _, _ := c.ask(i, r, &stored)
	return take
}

// ask asks r about message i's result: its text cleared (the default
// placeholder when r says none), whether r takes it, and whether the answer
// read what the agent quoted, up to horizon. stored is 1 + the tokens of the
// result's model copy, 0 until counted.
func (c *compaction) ask(i int, r *ClearRule, stored *int) (text string, take, quoted bool, horizon compactPos) {
	res := c.v.Origins[i].Result
	call, hasArg := c.callOf(i, res)
	kind, what, size, back := c.describe(res, call, hasArg)
	about := fmt.Sprintf("the %s of %s (call %s, %d bytes)", kind, what, res.CallID, size)
	def := "[cleared to save context: " + about + ". To see it again, " + back + ".]"
	if r == nil {
		return def, true, false, compactPos{}
	}
	take, text = r.Clear(ClearCandidate{Result: res, About: about, Back: back,
		Tokens: func() int {
			if *stored == 0 {
				m := harness.ToolMessage(res)
				*stored = tokens.CountMessage(c.counter, &m) + 1
			}
			return *stored - 1
		},
		Quoted: func() []int {
			if !quoted {
				quoted, horizon = true, c.horizon(i)
			}
			return quotedLines(res.ModelText(), c.quotedFrom(i, horizon))
		}})
	if text == "" {
		text = def
	}
	return text, take, quoted, horizon
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

package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
)

// Defaults of [StuckPolicy] (harness-rs nudges after 3 identical rounds and
// aborts after 6; OpenHands treats A-B-A-B over 6 steps and 3 identical
// errors as stuck).
const (
	defaultStuckNudgeAfter     = 3
	defaultStuckAbortAfter     = 6
	defaultStuckAlternateAfter = 6
	defaultStuckFailAfter      = 3
)

// stuckName names the policy in events.
const stuckName = "stuck"

// StuckPolicy is a [harness.ViewPolicy] that notices a turn going round in
// circles and first tells the model, then stops its tool rounds.
//
// A round's fingerprint is its calls: each call's name and canonical JSON
// arguments (key order, whitespace and number spelling do not matter),
// sorted, since the order of one round's calls carries no meaning. From the
// current turn's rounds it detects:
//
//   - repeats: the same fingerprint in consecutive rounds. NudgeAfter
//     rounds in a row add a nudge; AbortAfter rounds stop the tool rounds.
//   - alternation: A-B-A-B… between two fingerprints. Two full cycles (four
//     rounds) add a nudge; AlternateAfter rounds stop.
//   - a failing call: one call (same name and arguments) that returned an
//     error result in consecutive rounds. One failure short of FailAfter
//     adds a nudge; FailAfter stops.
//
// A streak is nudged once, when it qualifies, and again only every n rounds
// it goes on. A nudge is a user message right after the round that
// triggered it, recomputed from the transcript in every later view, so the
// request only grows at its end (prompt caches stay warm). A stop sets
// v.Stop to
// [harness.Stuck]: the agent withholds tools and makes the synthesis call,
// whose view ends with a message saying why tools were withdrawn, and the
// turn's outcome is Stuck.
//
// It reads only the transcript; run it before CompactPolicy, which
// measures its messages too. A nil *StuckPolicy or zero
// fields mean defaults; a No… field turns its detector (or the repeats'
// nudge or stop) off. A negative threshold is an error (ApplyView returns
// it).
type StuckPolicy struct {
	// NudgeAfter and AbortAfter count identical consecutive rounds
	// (defaults 3 and 6).
	NudgeAfter, AbortAfter int
	// AlternateAfter counts the rounds of an A-B alternation that stop
	// the turn (default 6).
	AlternateAfter int
	// FailAfter counts consecutive failures of one call that stop the turn
	// (default 3).
	FailAfter int
	// NoRepeatNudge: identical consecutive rounds add no nudge (they
	// still stop the turn after AbortAfter unless NoRepeatAbort is set).
	NoRepeatNudge bool
	// NoRepeatAbort: identical consecutive rounds never stop the turn
	// (they still nudge after NudgeAfter).
	NoRepeatAbort bool
	// NoAlternate leaves the alternation detector out: an A-B-A-B…
	// alternation neither nudges nor stops.
	NoAlternate bool
	// NoFailingCall leaves the failing-call detector out: a call that
	// keeps failing neither nudges nor stops.
	NoFailingCall bool

	// memo keeps each turn's verdicts between views (see stuckMemo).
	memo stuckMemo
}

// stuckRules are a StuckPolicy's thresholds with defaults applied; 0 is
// off.
type stuckRules struct {
	NudgeAfter, AbortAfter, AlternateAfter, FailAfter int
}

func (p *StuckPolicy) config() (stuckRules, error) {
	if p == nil {
		p = &StuckPolicy{}
	}
	rule := func(name string, v int, offName string, off bool, def int) (int, error) {
		n, err := offOrDefault(name, v, def, off, offName+" turns it off")
		if err != nil {
			err = fmt.Errorf("stuck: %w", err)
		}
		return n, err
	}
	var c stuckRules
	var errs [4]error
	c.NudgeAfter, errs[0] = rule("NudgeAfter", p.NudgeAfter, "NoRepeatNudge", p.NoRepeatNudge, defaultStuckNudgeAfter)
	c.AbortAfter, errs[1] = rule("AbortAfter", p.AbortAfter, "NoRepeatAbort", p.NoRepeatAbort, defaultStuckAbortAfter)
	c.AlternateAfter, errs[2] = rule("AlternateAfter", p.AlternateAfter, "NoAlternate", p.NoAlternate, defaultStuckAlternateAfter)
	c.FailAfter, errs[3] = rule("FailAfter", p.FailAfter, "NoFailingCall", p.NoFailingCall, defaultStuckFailAfter)
	return c, errors.Join(errs[:]...)
}

// stuckLevel orders verdicts.
type stuckLevel int

const (
	stuckNone stuckLevel = iota
	stuckNudge
	stuckAbort
)

// stuckVerdict is what the policy concludes after a prefix of the turn's
// rounds.
type stuckVerdict struct {
	level  stuckLevel
	kind   string // "repeat", "alternate", "fail"
	rounds int    // how many rounds the pattern spans
	// pattern names what repeats (the fingerprint of the repeated round,
	// of the two alternating ones, or of the failing call), so that the
	// rounds of one streak are told from the start of another.
	pattern string
	// message is the nudge; reason the one-line account for StopReason
	// and events.
	message, reason string
}

// ApplyView adds the turn's nudges to v and stops the tool rounds when the
// turn is stuck. The nudges of the conversation's earlier turns are placed
// again where those turns' requests showed them, so that a new turn's
// first request extends the previous one instead of dropping messages
// from the middle of a cached prefix.
func (p *StuckPolicy) ApplyView(ctx context.Context, v *harness.View) error {
	if v == nil || v.Turn == nil {
		return nil
	}
	cfg, err := p.config()
	if err != nil {
		return err
	}
	var ps []placement
	if v.Conversation != nil {
		for _, t := range v.Conversation.Turns {
			if t == v.Turn || t.Index >= v.Turn.Index {
				break
			}
			// An ended turn's last request showed its last verdict's
			// message: a stop ends with the synthesis call.
			if inserts, _, ok := p.judge(v.Conversation, t, cfg, true); ok && len(inserts) > 0 {
				ps = append(ps, placement{turn: t.Index, inserts: inserts})
			}
		}
	}
	inserts, last, ok := p.judge(v.Conversation, v.Turn, cfg, v.Final)
	if ok && len(inserts) > 0 {
		ps = append(ps, placement{turn: v.Turn.Index, inserts: inserts, atEnd: true})
	}
	insertAfterRounds(v, ps)
	switch {
	case !ok || v.Final:
	case last.level == stuckAbort:
		v.Stop, v.StopReason = harness.Stuck, last.reason
		harness.Emit(ctx, ofView(v, harness.Event{Kind: harness.EventPolicy, Policy: stuckName, Round: v.Round,
			Detail: "stopping the tool rounds: " + last.reason,
			Data:   map[string]any{"action": "abort", "pattern": last.kind, "rounds": last.rounds}}))
	case last.level == stuckNudge:
		harness.Emit(ctx, ofView(v, harness.Event{Kind: harness.EventPolicy, Policy: stuckName, Round: v.Round,
			Detail: "nudged the model: " + last.reason,
			Data:   map[string]any{"action": "nudge", "pattern": last.kind, "rounds": last.rounds}}))
	}
	return nil
}

// judge returns the messages a request of turn t (of conv) shows after
// its rounds (round index → message) and the verdict after all its tool
// rounds; ok is false when it made no calls. The verdict after every prefix counts:
// earlier ones place the nudges the model was shown then. After the last
// tool round comes its nudge, or on a stop the notice that closes the
// synthesis call (final); a stop in a request that is not final adds no
// message, since it ends the tool rounds instead.
func (p *StuckPolicy) judge(conv *harness.Conversation, t *harness.Turn, cfg stuckRules, final bool) (map[int]harness.Message, stuckVerdict, bool) {
	var rounds []*harness.Round
	for _, r := range t.Rounds {
		if len(r.Assistant.ToolCalls) > 0 {
			rounds = append(rounds, r)
		}
	}
	if len(rounds) == 0 {
		return nil, stuckVerdict{}, false
	}
	verdicts := p.verdicts(conv, t, rounds, cfg)
	inserts := map[int]harness.Message{}
	var streak nudgeStreak
	for j, vd := range verdicts[:len(rounds)-1] {
		if streak.shows(vd) {
			inserts[rounds[j].Index] = userText(vd.message)
		}
	}
	last, newest := verdicts[len(rounds)-1], rounds[len(rounds)-1].Index
	if !streak.shows(last) && last.level == stuckNudge {
		last = stuckVerdict{} // the streak's nudge was given: nothing new to say or report
	}
	switch {
	case last.level == stuckAbort && final:
		inserts[newest] = stoppedMessage(last)
	case last.level == stuckNudge:
		inserts[newest] = userText(last.message)
	}
	return inserts, last, true
}

// nudgeStreak follows the verdicts of a turn's rounds in order and tells
// which nudges are shown: a streak (one pattern nudged in consecutive
// rounds) is nudged when it first qualifies, after n rounds, and again
// every n rounds after that (with the defaults: after 3 repeats, then the
// stop at 6). A nudge stays in every later view of the turn, so telling
// the model again each round of one streak only adds a message to every
// later request; the replay bench can show that cost and not whether a
// repeat would have helped.
type nudgeStreak struct {
	prev  stuckVerdict
	first int // the rounds the streak spanned when first nudged
}

// shows reports whether verdict v, the next round's, adds its message; it
// must see every round's verdict, none included, to tell streaks apart.
func (s *nudgeStreak) shows(v stuckVerdict) bool {
	same := v.level == stuckNudge && s.prev.level == stuckNudge && v.kind == s.prev.kind && v.pattern == s.prev.pattern
	s.prev = v
	switch {
	case v.level != stuckNudge:
		s.first = 0
		return v.level != stuckNone
	case !same || s.first <= 0:
		s.first = v.rounds
		return true
	}
	return (v.rounds-s.first)%s.first == 0
}

// stoppedMessage closes the view of the synthesis call of a turn whose
// tool rounds were stopped.
func stoppedMessage(last stuckVerdict) harness.Message {
	return userText("Tool use was stopped: " + last.reason + ". Tools are no longer available. " +
		"Answer the user now with what you have found, and say plainly what you could not determine.")
}

func userText(s string) harness.Message {
	return harness.Message{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart(s)}}
}

// placement is what a request shows after the rounds of one turn: round
// index → message.
type placement struct {
	turn    int
	inserts map[int]harness.Message
	// atEnd places the messages of rounds not in the view (cleared or
	// summarized away) at the end (the running turn); without it they
	// are not shown (an ended turn).
	atEnd bool
}

// insertAfterRounds places each message of ps after the last message of
// its round in v, in one pass over the view for all turns: a view of a
// long conversation places every ended turn's nudges again, and a pass
// per turn made each request cost turns × messages.
func insertAfterRounds(v *harness.View, ps []placement) {
	type at struct{ turn, round int }
	if len(ps) == 0 {
		return
	}
	wanted := map[at]harness.Message{}
	for _, p := range ps {
		for r, m := range p.inserts {
			wanted[at{p.turn, r}] = m
		}
	}
	last := map[at]int{}
	for i, o := range v.Origins {
		if k := (at{o.Turn, o.Round}); o.Round > 0 {
			if _, ok := wanted[k]; ok {
				last[k] = i
			}
		}
	}
	after := map[int][]at{} // message index → the inserts that follow it
	var tail []at
	for _, p := range ps {
		for r := range p.inserts {
			if i, ok := last[at{p.turn, r}]; ok {
				after[i] = append(after[i], at{p.turn, r})
			} else if p.atEnd {
				tail = append(tail, at{p.turn, r})
			}
		}
	}
	// Insert from the back, so the indexes still to come stay valid; a
	// message's inserts follow it in round order, the tail's at the end.
	insert := func(i int, ks []at) {
		slices.SortFunc(ks, func(a, b at) int { return cmp.Or(cmp.Compare(a.turn, b.turn), cmp.Compare(a.round, b.round)) })
		for k := len(ks) - 1; k >= 0; k-- {
			_ = v.Insert(i, wanted[ks[k]], harness.Origin{Turn: ks[k].turn, Round: ks[k].round})
		}
	}
	insert(len(v.Messages), tail)
	idx := slices.Sorted(maps.Keys(after))
	for j := len(idx) - 1; j >= 0; j-- {
		insert(idx[j]+1, after[idx[j]])
	}
}

// roundFacts are what the detectors need of one round, computed once per
// view: the round's fingerprint, each call's fingerprint and whether it
// failed, and (lazily, since it reads every result in full) a digest of
// its results.
type roundFacts struct {
	round   *harness.Round
	fp      string
	calls   []string        // fingerprint of each call, in call order
	failed  map[string]bool // call fingerprint → an error result
	results *string
}

func newRoundFacts(r *harness.Round) roundFacts {
	f := roundFacts{round: r, fp: roundFingerprint(r), failed: map[string]bool{}}
	errs := map[string]bool{}
	for _, res := range r.Results {
		if res.IsError {
			errs[res.CallID] = true
		}
	}
	for _, c := range r.Assistant.ToolCalls {
		fp := callFingerprint(c)
		f.calls = append(f.calls, fp)
		if errs[c.ID] {
			f.failed[fp] = true
		}
	}
	return f
}

func (f *roundFacts) resultDigest() string {
	if f.results == nil {
		d := roundResults(f.round)
		f.results = &d
	}
	return *f.results
}

// assess judges a prefix of the turn's rounds (each with calls). The
// strongest verdict wins; among equals, repeats before alternation before
// failures.
func (c stuckRules) assess(facts []roundFacts) stuckVerdict {
	var best stuckVerdict
	for _, v := range []stuckVerdict{c.repeatVerdict(facts), c.alternateVerdict(facts), c.failVerdict(facts)} {
		if v.level > best.level {
			best = v
		}
	}
	return best
}

// repeatVerdict judges the trailing rounds with the newest fingerprint.
func (c stuckRules) repeatVerdict(facts []roundFacts) stuckVerdict {
	n := len(facts)
	run := 1
	for run < n && facts[n-1-run].fp == facts[n-1].fp {
		run++
	}
	if run < 2 {
		return stuckVerdict{}
	}
	same := true
	want := facts[n-1].resultDigest()
	for k := n - run; k < n-1 && same; k++ {
		same = facts[k].resultDigest() == want
	}
	calls := describeCalls(facts[n-1].round.Assistant.ToolCalls)
	results := "got the same results"
	if !same {
		results = "the results did not bring you closer to an answer"
	}
	v := stuckVerdict{kind: "repeat", rounds: run, pattern: facts[n-1].fp,
		reason: fmt.Sprintf("the same calls were made %d rounds in a row (%s)", run, calls),
		message: fmt.Sprintf("You made the same calls %d times in a row and %s: %s. "+
			"Repeating them will not change the outcome; change approach or answer with what you have.", run, results, calls)}
	switch {
	case c.AbortAfter > 0 && run >= c.AbortAfter:
		v.level = stuckAbort
	case c.NudgeAfter > 0 && run >= c.NudgeAfter:
		v.level = stuckNudge
	}
	return v
}

// alternateVerdict judges an alternation A-B-A-B… with A ≠ B.
func (c stuckRules) alternateVerdict(facts []roundFacts) stuckVerdict {
	n := len(facts)
	fp := func(i int) string { return facts[i].fp }
	if c.AlternateAfter <= 0 || n < 4 || fp(n-1) == fp(n-2) {
		return stuckVerdict{}
	}
	alt := 2
	for alt < n && fp(n-1-alt) == fp(n-1-alt+2) {
		alt++
	}
	if alt < 4 {
		return stuckVerdict{}
	}
	a := describeCalls(facts[n-2].round.Assistant.ToolCalls)
	b := describeCalls(facts[n-1].round.Assistant.ToolCalls)
	pair := []string{fp(n - 2), fp(n - 1)}
	slices.Sort(pair) // A-B and B-A are one alternation
	v := stuckVerdict{kind: "alternate", rounds: alt, level: stuckNudge, pattern: strings.Join(pair, "\x00"),
		reason: fmt.Sprintf("the calls alternated between the same two rounds for %d rounds (%s, then %s)", alt, a, b),
		message: fmt.Sprintf("You have alternated between the same two sets of calls for %d rounds (%s, then %s) "+
			"and they keep giving the same answers. Change approach or answer with what you have.", alt, a, b)}
	if alt >= c.AlternateAfter {
		v.level = stuckAbort
	}
	return v
}

// failVerdict judges the calls of the newest round that failed, and failed
// in the rounds just before it too: the first of the strongest verdicts.
func (c stuckRules) failVerdict(facts []roundFacts) stuckVerdict {
	var best stuckVerdict
	if c.FailAfter <= 0 {
		return best
	}
	n := len(facts)
	for i, call := range facts[n-1].round.Assistant.ToolCalls {
		cfp := facts[n-1].calls[i]
		if !facts[n-1].failed[cfp] {
			continue
		}
		k := 1
		for k < n && facts[n-1-k].failed[cfp] {
			k++
		}
		if k < 2 || k < c.FailAfter-1 {
			continue
		}
		desc := describeCalls([]harness.ToolCall{call})
		v := stuckVerdict{kind: "fail", rounds: k, level: stuckNudge, pattern: cfp,
			reason: fmt.Sprintf("the call %s failed %d rounds in a row", desc, k),
			message: fmt.Sprintf("The call %s failed %d times in a row. Repeating it unchanged will fail again: "+
				"read the error, fix the arguments or use another tool, or answer with what you have.", desc, k)}
		if k >= c.FailAfter {
			v.level = stuckAbort
		}
		if v.level > best.level {
			best = v
		}
	}
	return best
}

// describeCalls renders calls for a message: name(args), arguments cut
// to a short length, at most three calls.
func describeCalls(calls []harness.ToolCall) string {
	const maxArgs, maxCalls = 120, 3
	var parts []string
	for i, c := range calls {
		if i == maxCalls {
			parts = append(parts, fmt.Sprintf("and %d more", len(calls)-maxCalls))
			break
		}
		args := canonjson.OrRaw(c.Args)
		if r := []rune(args); len(r) > maxArgs {
			args = string(r[:maxArgs]) + "…"
		}
		parts = append(parts, c.Name+"("+args+")")
	}
	return strings.Join(parts, ", ")
}

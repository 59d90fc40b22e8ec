package guard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/tokens"
)

// SettleName names [Settle] in cuts and events.
const SettleName = "settle"

// Defaults of [Settle].
const (
	// DefaultSettleOver is the smallest model copy settled, in bytes:
	// below it the digest would save too little to be worth the model's
	// losing the whole.
	DefaultSettleOver = 2 << 10
	// DefaultSettleHead and DefaultSettleTail are the digest's bytes from
	// the start (the headline) and the end (the verdict of a log).
	DefaultSettleHead = 512
	DefaultSettleTail = 768
)

// Settle is an opt-in [harness.ViewPolicy] that decides a large result's
// long-term copy one request after the model has seen it whole: from the
// second request on, the result is shown as a digest — its first and last
// lines and a marker saying it was shown whole once and how to get it
// back — instead of in full.
//
// The why is the prompt cache. A result arrives at the end of a request;
// on the next request it is the newest part of the cached prefix, with
// nothing after it but that request's new messages. Changing it then
// re-sends only the changed result itself (the digest, uncached, instead
// of the whole at a tenth): the cheapest moment to shrink a result that
// the model has already read. Later, everything after it would be re-sent
// too, which is why clearing old results costs more than keeping them
// (DESIGN.md), and at arrival the model has not read it yet. The agent
// has then reacted to the whole output (its next message is written
// with it in view), so what it took from it is in its own messages.
//
// A round's results are settled together when the expected saving pays
// for the miss:
//
//	saving = 0.1 × Σ (result tokens − digest tokens) × expected remaining requests
//	miss   = Σ over the round's results from the first settled one: tokens re-sent − 0.1 × tokens as cached
//
// with the remaining requests estimated, as [EconClear] does, from the
// requests made so far (never from the future). Everything the decision
// reads is stored in the transcript (the round's results and the
// conversation's length at the time), so every later view makes the same
// decision and the prefix stays cacheable.
//
// A settled result is a view cut (harness.CutTrimmed, By SettleName,
// Locator the spill path or "call:<id>"): the stored result never
// changes, and the recall tool or the spill file gives the full output
// back. Results already cut in the view (cleared by compaction), results
// Skip names and results that are not text are left alone. Run it before
// TurnBudget and CompactPolicy. The zero value settles with the defaults.
//
// Measured (harness bench --presets harness+settle/runs: the defaults
// with Skip: SkipFileReads): on the three recorded mini-swe-agent runs
// 0.788 → 0.750 × keeping everything (the output-heavy sqlfluff-1733
// 0.698 → 0.649), 3 of 124 used strings no longer visible where the agent
// used them (all recoverable); on the built-in suite 0.178 → 0.167 with
// more evidence visible. Settling file reads too is cheaper (0.696) but
// hides 13 of 124: agents write identifiers from files they read tens of
// steps later. Opt-in: the defaults are the lead's call.
type Settle struct {
	// Over is the smallest model copy settled, in bytes (default 2 KiB).
	Over int
	// Head and Tail are the digest's bytes from the start and the end
	// (defaults 512 and 768), each cut at a line break when one lies in
	// its last (first) quarter.
	Head, Tail int
	// After is how many responses of the model a result stays whole for
	// (default 1: it is settled in the request after the model's first
	// reply to it). A longer wait keeps more of what the agent uses a few
	// steps later, and costs the re-sending of the rounds in between.
	After int
	// Mid, when > 0, adds to the digest up to Mid bytes of the middle's
	// lines that name something (a word of 4+ letters, digits or
	// underscores) the model wrote in the After replies: what it was
	// looking at in the output.
	Mid int
	// Skip, when set, names results that keep their copy (for example
	// reads of a file the agent is about to edit).
	Skip func(call harness.ToolCall, res *harness.ToolResult) bool
	// Margin is how many times the miss the expected saving must be
	// (default 1).
	Margin float64
	// Remaining estimates the requests still to come after the settling
	// one, given the requests made so far, that one included (default:
	// that number).
	Remaining func(requests int) float64
	// Counter counts tokens for the decision (default o200k).
	Counter tokens.Counter
	// NoRecall leaves the recall tool out of markers, for agents that do
	// not offer it.
	NoRecall bool

	once    sync.Once
	counter tokens.Counter
	initErr error
}

// ApplyView settles the rounds of v the model has answered since seeing
// them (see [Settle]).
func (s *Settle) ApplyView(ctx context.Context, v *harness.View) error {
	if s == nil || v == nil || v.Conversation == nil {
		return nil
	}
	counter, err := s.tokenCounter()
	if err != nil {
		return err
	}
	at := map[string]int{} // call id → index of its tool message in v
	for i, m := range v.Messages {
		if m.Role == harness.RoleTool && v.Origins[i].Result != nil {
			at[m.ToolCallID] = i
		}
	}
	after := s.After
	if after <= 0 {
		after = 1
	}
	margin := s.Margin
	if margin <= 0 {
		margin = 1
	}
	// The rounds of the conversation in order; a round's results are
	// settled in the request made after `after` more rounds exist, when
	// the decision below (which reads only stored messages, so every
	// later view repeats it) says it pays.
	var rounds []*harness.Round
	for _, t := range v.Conversation.Turns {
		if t == nil {
			continue
		}
		for _, r := range t.Rounds {
			if r != nil {
				rounds = append(rounds, r)
			}
		}
	}
	for q, r := range rounds {
		if len(r.Results) == 0 || q+after >= len(rounds) {
			continue
		}
		next := rounds[q+1 : q+1+after]
		if err := s.settleRound(v, at, r, next, q+1, counter, margin); err != nil {
			return err
		}
	}
	return nil
}

// settleRound settles r's results in v when it pays. next are the rounds
// the model made after seeing them (their assistant messages are what it
// did with them) and q is r's ordinal among the conversation's rounds.
func (s *Settle) settleRound(v *harness.View, at map[string]int, r *harness.Round, next []*harness.Round, q int, counter tokens.Counter, margin float64) error {
	var terms map[string]bool
	if s.Mid > 0 {
		terms = map[string]bool{}
		for _, n := range next {
			settleTerms(n.Assistant.Text(), terms)
			for _, tc := range n.Assistant.ToolCalls {
				settleTerms(string(tc.Args), terms)
			}
		}
	}
	type member struct {
		res      *harness.ToolResult
		digest   string
		old, now int // tokens of the stored copy and of the digest
	}
	var group []member
	first := -1
	saved := 0
	miss := 0.0
	for _, res := range r.Results {
		if res == nil {
			continue
		}
		stored := harness.ToolMessage(res)
		m := member{res: res, digest: s.digestFor(r.Assistant.ToolCalls, res, terms)}
		m.old = tokens.CountMessage(counter, &stored)
		if m.digest != "" {
			stored.Parts = []harness.Part{harness.TextPart(m.digest)}
			if m.now = tokens.CountMessage(counter, &stored); m.now >= m.old {
				m.digest = ""
			}
		}
		if m.digest != "" && first < 0 {
			first = len(group)
		}
		if first >= 0 {
			if m.digest != "" {
				saved += m.old - m.now
				miss += float64(m.now) - 0.1*float64(m.old)
			} else {
				miss += 0.9 * float64(m.old) // re-sent unchanged
			}
		}
		group = append(group, m)
	}
	if first < 0 || saved <= 0 {
		return nil
	}
	// What the rounds in between (all but the newest of next, which is new
	// in the settling request anyway) re-send.
	for _, n := range next[:len(next)-1] {
		a := n.Assistant
		miss += 0.9 * float64(tokens.CountMessage(counter, &a))
		for _, res := range n.Results {
			if res != nil {
				tm := harness.ToolMessage(res)
				miss += 0.9 * float64(tokens.CountMessage(counter, &tm))
			}
		}
	}
	n := q + 1 + len(next) // the settling request
	remains := float64(n)
	if s.Remaining != nil {
		remains = s.Remaining(n)
	}
	if 0.1*float64(saved)*remains < margin*miss {
		return nil
	}
	for _, m := range group {
		i, ok := at[m.res.CallID]
		if m.digest == "" || !ok || len(v.Origins[i].Cuts) > 0 {
			continue // kept, not in this view, or already cut by a policy
		}
		cut := harness.Cut{Kind: harness.CutTrimmed, By: SettleName, BytesIn: len(m.res.ModelText()), BytesOut: len(m.digest), Locator: spillLocator(m.res)}
		if err := v.ReplaceText(i, m.digest, cut); err != nil {
			return fmt.Errorf("settle: %w", err)
		}
	}
	return nil
}

func (s *Settle) tokenCounter() (tokens.Counter, error) {
	s.once.Do(func() {
		if s.Counter != nil {
			s.counter = s.Counter
			return
		}
		bpe, err := tokens.O200k()
		if err != nil {
			s.initErr = fmt.Errorf("settle: %w", err)
			return
		}
		s.counter = tokens.NewCache(bpe, nil)
	})
	return s.counter, s.initErr
}

// digestFor returns the settled copy of res, or "" when res keeps its
// copy. It reads only stored messages, so every view agrees.
func (s *Settle) digestFor(calls []harness.ToolCall, res *harness.ToolResult, terms map[string]bool) string {
	over := s.Over
	if over <= 0 {
		over = DefaultSettleOver
	}
	text, ok := textOnly(res.ModelParts())
	if !ok || len(text) < over || res.TimedOut {
		return ""
	}
	if s.Skip != nil {
		var call harness.ToolCall
		for _, c := range calls {
			if c.ID == res.CallID {
				call = c
			}
		}
		if s.Skip(call, res) {
			return ""
		}
	}
	head, tail := s.Head, s.Tail
	if head <= 0 && tail <= 0 {
		head, tail = DefaultSettleHead, DefaultSettleTail
	}
	return settleDigest(text, head, tail, s.Mid, terms, res.CallID, spillLocator(res), !s.NoRecall)
}

// settleDigest is text's settled copy: up to head bytes from the start and
// tail bytes from the end, on line and UTF-8 boundaries, around a marker
// that says the output was shown whole once, how much is left out and how
// to get it back; with mid > 0, the marker is followed by up to mid bytes
// of the left-out lines that contain one of terms, in order. It returns
// text itself when the digest would not be shorter.
func settleDigest(text string, head, tail, mid int, terms map[string]bool, callID, locator string, recall bool) string {
	head, tail = max(head, 0), max(tail, 0)
	h, t := HeadTail{Head: head, Tail: tail}.Split(Window{Head: []byte(text), Tail: []byte(text), Total: int64(len(text))}, head+tail)
	for h > 0 && h < len(text) && !utf8.RuneStart(text[h]) {
		h--
	}
	start := len(text) - t
	for start < len(text) && !utf8.RuneStart(text[start]) {
		start++
	}
	start = max(start, h)
	omitted := text[h:start]
	if omitted == "" {
		return text
	}
	var picked []string
	if mid > 0 && len(terms) > 0 {
		used := 0
		for _, line := range strings.Split(omitted, "\n") {
			if used+len(line)+1 > mid || !mentionsAny(line, terms) {
				continue
			}
			picked = append(picked, line)
			used += len(line) + 1
		}
	}
	var back string
	switch {
	case locator != "call:"+callID && recall:
		back = fmt.Sprintf("read the file %s, or call recall with {\"call_id\":%q}", locator, callID)
	case locator != "call:"+callID:
		back = fmt.Sprintf("read the file %s", locator)
	case recall:
		back = fmt.Sprintf("call recall with {\"call_id\":%q}", callID)
	default:
		back = fmt.Sprintf("it is stored under call id %s", callID)
	}
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(text[:h], "\uFFFD"))
	if h > 0 && text[h-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[settled: this output was shown to you whole once; %d bytes (%d lines) of its middle are left out here", len(omitted), strings.Count(omitted, "\n"))
	if len(picked) > 0 {
		fmt.Fprintf(&b, " but for the %d lines below, which name what you wrote next", len(picked))
	}
	fmt.Fprintf(&b, ". To see it all again, %s.]\n", back)
	for _, l := range picked {
		b.WriteString(strings.ToValidUTF8(l, "\uFFFD"))
		b.WriteString("\n")
	}
	if len(picked) > 0 && start < len(text) {
		b.WriteString("[…]\n")
	}
	b.WriteString(strings.ToValidUTF8(text[start:], "\uFFFD"))
	if b.Len() >= len(text) {
		return text
	}
	return b.String()
}

// settleTerms adds to terms the words of s (runs of letters, digits and
// underscores) of at least 4 bytes.
func settleTerms(s string, terms map[string]bool) {
	for _, w := range strings.FieldsFunc(s, notWordRune) {
		if len(w) >= 4 {
			terms[w] = true
		}
	}
}

// mentionsAny reports whether line has a word in terms.
func mentionsAny(line string, terms map[string]bool) bool {
	for _, w := range strings.FieldsFunc(line, notWordRune) {
		if terms[w] {
			return true
		}
	}
	return false
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
}

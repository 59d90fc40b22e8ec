package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/store"
)

// Forks. A request is matched to its conversation by a key (see
// conversationID) and its history to the stored turns by position. Two
// histories can share a key: a loop that runs the same system prompt and
// first message twice, two Gemini CLI sessions opened alike on one day, a
// client that rewinds or edits an earlier message (Claude Code's /rewind,
// Codex's backtrack and /compact under one prompt_cache_key, opencode's
// /undo). Matched by position, the second history's rounds would be
// skipped as stored or dropped as belonging to an ended turn. So each
// request's history is first compared with the conversation's mirror,
// position by position (a turn's input, then its rounds): where both hold
// something and it differs, the request belongs to a fork, a conversation
// of its own whose id is derived from the parent's id and the history up
// to and including the element that differs. Every later request of the
// branch, and a restarted proxy, derives the same id; a branch that
// diverges from its fork again forks again.
//
// What is compared is what the client does not rewrite: a turn's input
// (the user's words, not the context messages the client adds and
// re-dates, which the key ignores too) and a round's call ids and tool
// names, never a result's text (opencode prunes old tool outputs, the
// proxy's own edits are not in the client's history). A history shorter
// than the mirror (a client retrying an older request) is not a fork.

// mark is one position of a conversation: a turn's input (round 0) or
// one of its rounds. A history's marks point into its turns, a mirror's
// into the stored ones; they are compared in place, since every request
// compares its whole history.
type mark struct {
	turn, round int
	// input and context are a turn's (round 0).
	input   string
	context []harness.ContextMessage
	// calls are a round's calls, results its results' call ids: a
	// history round's hist (filtered when compared), a mirror round's
	// stored.
	calls  []harness.ToolCall
	hist   []*wireResult
	stored []*harness.ToolResult
	// answer is set on a round without calls that ends its turn's rounds
	// (the turn's answer, which a client may leave out of its history
	// when it had no text).
	answer bool
}

// markIter walks a conversation's positions in order, one mark at a
// time: a request compares its whole history with the mirror, which
// would otherwise cost a list of both per request.
type markIter struct {
	turns int
	// rounds counts the rounds of turn t (from 0); at is the mark of
	// turn t's input (r 0) or round r.
	rounds func(t int) int
	at     func(t, r int) mark
	// t and r are the position, i the marks passed.
	t, r, i int
}

func (it *markIter) done() bool { return it.t >= it.turns }

func (it *markIter) mark() mark { return it.at(it.t, it.r) }

func (it *markIter) next() {
	it.i++
	if it.r < it.rounds(it.t) {
		it.r++
		return
	}
	it.t, it.r = it.t+1, 0
}

// list returns the first n marks (all when n < 0).
func (it markIter) list(n int) []mark {
	var out []mark
	for ; !it.done() && n != 0; it.next() {
		out = append(out, it.mark())
		n--
	}
	return out
}

// histMarks walks the positions of a request's history.
func histMarks(h *history) markIter {
	return markIter{turns: len(h.Turns),
		rounds: func(t int) int { return len(h.Turns[t].Rounds) },
		at: func(ti, ri int) mark {
			t := h.Turns[ti]
			if ri == 0 {
				return mark{turn: ti + 1, input: t.Input, context: t.Context}
			}
			r := t.Rounds[ri-1]
			return mark{turn: ti + 1, round: ri, calls: r.Assistant.ToolCalls, hist: r.Results,
				answer: len(r.Assistant.ToolCalls) == 0 && ri == len(t.Rounds)}
		}}
}

// mirrorMarks walks the positions of a conversation's mirror.
func mirrorMarks(mirror []*harness.Turn) markIter {
	return markIter{turns: len(mirror),
		rounds: func(t int) int { return len(mirror[t].Rounds) },
		at: func(ti, ri int) mark {
			t := mirror[ti]
			if ri == 0 {
				return mark{turn: t.Index, input: t.Input, context: t.Context}
			}
			r := t.Rounds[ri-1]
			return mark{turn: t.Index, round: ri, calls: r.Assistant.ToolCalls, stored: r.Results,
				answer: len(r.Assistant.ToolCalls) == 0 && ri == len(t.Rounds)}
		}}
}

// resultIDs are the call ids of a round's results that the store holds or
// will: in a history only those with content, the ones decided.
func (m mark) resultIDs() []string {
	var ids []string
	for _, r := range m.hist {
		if r.Content.End > r.Content.Start {
			ids = append(ids, r.CallID)
		}
	}
	for _, r := range m.stored {
		ids = append(ids, r.CallID)
	}
	return ids
}

// namesAll reports whether every result id of m is the id of one of its
// calls (always so but in Gemini rounds whose calls carry no id).
func (m mark) namesAll() bool {
	named := func(id string) bool {
		for _, c := range m.calls {
			if c.ID == id {
				return true
			}
		}
		return false
	}
	for _, r := range m.hist {
		if r.Content.End > r.Content.Start && !named(r.CallID) {
			return false
		}
	}
	for _, r := range m.stored {
		if !named(r.CallID) {
			return false
		}
	}
	return true
}

// synthetic reports whether call c has no id of its own: the proxy then
// uses the function name (geminiID), the same in every request, which
// cannot tell two calls of one tool apart.
func synthetic(c harness.ToolCall) bool { return c.ID == c.Name }

// sameRound reports whether two rounds are one: the same calls (id and
// tool name, and the arguments of a call with no id of its own, as
// canonical JSON since a store may re-encode them) and, when some result
// id names none of the calls (Gemini CLI names the responses to calls
// without ids itself, per session), the same result ids.
func sameRound(a, b mark) bool {
	if len(a.calls) != len(b.calls) {
		return false
	}
	for i, c := range a.calls {
		d := b.calls[i]
		if c.ID != d.ID || c.Name != d.Name {
			return false
		}
		if synthetic(c) && !bytes.Equal(c.Args, d.Args) && canonjson.OrRaw(c.Args) != canonjson.OrRaw(d.Args) {
			return false
		}
	}
	if a.namesAll() && b.namesAll() {
		return true
	}
	return slices.Equal(a.resultIDs(), b.resultIDs())
}

// writeSig writes what identifies round m in a fork's id to w: the
// fields sameRound compares.
func (m mark) writeSig(w io.Writer) {
	for _, c := range m.calls {
		io.WriteString(w, c.ID)
		w.Write([]byte{0})
		io.WriteString(w, c.Name)
		if synthetic(c) {
			w.Write([]byte{0})
			io.WriteString(w, canonjson.OrRaw(c.Args))
		}
		w.Write([]byte{1})
	}
	if !m.namesAll() {
		for _, id := range m.resultIDs() {
			w.Write([]byte{2})
			io.WriteString(w, id)
		}
	}
}

// sameInput reports whether two turn inputs are the same user words. A
// turn an earlier proxy stored holds the client's context joined into its
// input (no context apart): it is the same turn when that input holds the
// words and every context message (TestOldStoreJoinedInput).
func sameInput(stored, sent mark) bool {
	if stored.input == sent.input {
		return true
	}
	if len(stored.context) > 0 || len(sent.context) == 0 || !strings.Contains(stored.input, sent.input) {
		return false
	}
	for _, c := range sent.context {
		if !strings.Contains(stored.input, c.Text) {
			return false
		}
	}
	return true
}

// sameMark reports whether the history's position a is the mirror's b.
func sameMark(a, b mark) bool {
	if a.turn != b.turn || a.round != b.round {
		return false
	}
	if a.round == 0 {
		return sameInput(b, a)
	}
	return sameRound(a, b)
}

// divergence is where a history leaves its conversation's mirror.
type divergence struct {
	// hist is the index of the first history mark that differs; shared
	// the number of leading mirror marks the fork keeps.
	hist, shared int
	// turn and round locate the history's diverging position (round 0:
	// the turn's input).
	turn, round int
}

// diverge compares a request's history with the mirror position by
// position and reports the first position both hold where they differ
// (ok false when none: the history extends the mirror or is a prefix of
// it). An answer without calls that one side holds at the end of a turn
// and the other does not (the next turn follows at once) is skipped. For a
// side request (side: no tools offered) a stored answer stands for its
// whole turn: it is the side model's (a summary, a router's choice), which the client
// never keeps, and the history's rounds in its place are the main
// conversation's; without the rule every side request after the first
// would fork its conversation again (TestForkSideRequests).
func diverge(mirror []*harness.Turn, h *history, side bool) (divergence, bool) {
	hm, mm := histMarks(h), mirrorMarks(mirror)
	for !hm.done() && !mm.done() {
		a, b := hm.mark(), mm.mark()
		switch {
		case sameMark(a, b):
			hm.next()
			mm.next()
		case b.answer && a.round == 0 && a.turn == b.turn+1:
			mm.next()
		case a.answer && b.round == 0 && b.turn == a.turn+1:
			hm.next()
		case side && b.answer && a.round > 0 && a.turn == b.turn:
			for mm.next(); !hm.done() && hm.mark().turn == a.turn; hm.next() {
			}
		default:
			return divergence{hist: hm.i, shared: mm.i, turn: a.turn, round: a.round}, true
		}
	}
	return divergence{}, false
}

// forkID names the fork of conversation parent that history h makes at
// d: a hash of the parent's id and h's positions up to and including the
// diverging one, so every request of the branch names the same fork. It
// is the parent's id with a suffix while that stays within sanitizeID's
// 128 characters (a fork of a fork of … is then told by its id alone).
func forkID(parent string, h *history, d divergence) string {
	sum := sha256.New()
	part := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		sum.Write(n[:])
		sum.Write([]byte(s))
	}
	part("fork")
	part(parent)
	for _, m := range histMarks(h).list(d.hist + 1) {
		if m.round == 0 {
			part("turn")
			part(m.input)
		} else {
			part("round")
			m.writeSig(sum)
		}
	}
	x := hex.EncodeToString(sum.Sum(nil))
	if id := parent + "-f" + x[:12]; len(id) <= 128 {
		return id
	}
	return tenantPrefix(parent) + "px-f" + x[:20]
}

// ForkPolicy names the event that reports a fork: a harness.EventPolicy
// event of the fork, recorded when the proxy makes it, whose Policy is
// ForkPolicy, Turn and Round the history's position where it diverged
// (Round 0: the turn's input) and Data["parent"] the parent
// conversation's id (Data["shared_turns"] how many of its turns the fork
// holds again). The link itself is kept as a store.Fork (Store.Forks),
// which "harness log" reads.
const ForkPolicy = "proxy-fork"

// forkSeed is what a new fork takes from its parent: the shared turns and
// the decisions of their results, copied under the parent's lock.
type forkSeed struct {
	parent string
	at     divergence
	turns  []*harness.Turn
	// ended[i] is set when turns[i] ended in the parent and a later
	// shared turn follows it (the last shared turn goes on in the fork).
	ended    []bool
	decided  map[string][]*decision
	usage    map[roundKey]harness.Usage
	times    map[roundKey]time.Time
	evidence map[roundKey]int
	// prevIn and prevOut let the fork's first request be checked for
	// cache breaks against the parent's last one.
	prevIn, prevOut []uint64
}

// seedOf copies from cv what its fork at d shares. Called with cv locked.
func (cv *conversation) seedOf(d divergence) *forkSeed {
	s := &forkSeed{parent: cv.id, at: d, decided: map[string][]*decision{}, usage: map[roundKey]harness.Usage{}, times: map[roundKey]time.Time{},
		evidence: map[roundKey]int{}, prevIn: cv.prevIn, prevOut: cv.prevOut}
	for _, m := range mirrorMarks(cv.mirror).list(d.shared) {
		src := cv.mirror[m.turn-1]
		if m.round == 0 {
			t := *src
			t.Rounds, t.Usage = nil, harness.Usage{}
			s.turns = append(s.turns, &t)
			s.ended = append(s.ended, src.Outcome != "")
			continue
		}
		r := src.Rounds[m.round-1]
		t := s.turns[len(s.turns)-1]
		t.Rounds = append(t.Rounds, r)
		t.Usage = t.Usage.Add(r.Usage)
		for _, res := range r.Results {
			if _, done := s.decided[res.CallID]; done {
				continue
			}
			for _, d := range cv.decided[res.CallID] {
				// A copy: the fork's idle clear must not change what the
				// parent sends.
				dc := *d
				s.decided[res.CallID] = append(s.decided[res.CallID], &dc)
			}
		}
	}
	if n := len(s.ended); n > 0 {
		s.ended[n-1] = false
	}
	for k, u := range cv.usage {
		s.usage[k] = u
	}
	for k, t := range cv.times {
		s.times[k] = t
	}
	for k, n := range cv.evidence {
		s.evidence[k] = n
	}
	return s
}

// seedFork records a new fork's shared turns as its own (the store has no
// link between conversations, so the fork holds its prefix again) and
// takes the parent's decisions of their results, so the prefix goes
// upstream with the bytes it went with before, a result the parent's idle
// clear took included (recorded in the fork too, for a restart). The
// fork's idle state is
// its own: no pause is measured until it has relayed an answer. Called
// with fork locked, its mirror empty.
func (p *Proxy) seedFork(ctx context.Context, fork *conversation, s *forkSeed) {
	round := max(s.at.round, 1)
	var cleared []*decision
	for id, ds := range s.decided {
		fork.decided[id] = append(fork.decided[id], ds...)
		for _, d := range ds {
			if d.cleared != nil {
				cleared = append(cleared, d)
			}
		}
	}
	p.inheritClears(ctx, fork.id, s.parent, s.at.turn, round, cleared)
	for k, u := range s.usage {
		if _, ok := fork.usage[k]; !ok {
			fork.usage[k] = u
		}
	}
	for k, t := range s.times {
		if _, ok := fork.times[k]; !ok {
			fork.times[k] = t
		}
	}
	for k, n := range s.evidence {
		if _, ok := fork.evidence[k]; !ok {
			fork.evidence[k] = n
		}
	}
	fork.prevIn, fork.prevOut = s.prevIn, s.prevOut
	for i, src := range s.turns {
		t := *src
		t.Rounds, t.Usage = nil, harness.Usage{}
		t.Outcome, t.Ended = "", time.Time{}
		mt := &t
		p.beginTurn(fork, mt)
		for _, r := range src.Rounds {
			p.addRound(fork, mt, r, nil)
		}
		if s.ended[i] {
			p.closeTurn(fork, mt, src.Outcome, src.Ended)
		}
	}
	if p.opts.Store != nil {
		p.opts.Store.Observe(harness.Event{Kind: harness.EventPolicy, Time: p.now(), Conversation: fork.id, Turn: s.at.turn, Round: s.at.round,
			Policy: ForkPolicy, Detail: fmt.Sprintf("forked from conversation %s at turn %d %s", s.parent, s.at.turn, roundWord(s.at.round)),
			Data: map[string]any{"parent": s.parent, "shared_turns": len(s.turns)}})
		link := store.Fork{Conversation: fork.id, Parent: s.parent, Turn: s.at.turn, Round: s.at.round, SharedTurns: len(s.turns), Time: p.now()}
		if err := p.opts.Store.AddFork(ctx, link); err != nil {
			p.logf("harness proxy: recording %s as a fork of %s: %v", fork.id, s.parent, err)
		}
	}
	p.countIn(p.tenantIn(fork.id), func(st *Stats) { st.Forks++ })
	p.logf("harness proxy: conversation %s forks from %s at turn %d %s (%d shared turn(s))",
		fork.id, s.parent, s.at.turn, roundWord(s.at.round), len(s.turns))
}

// roundWord names a diverging position within its turn for the log.
func roundWord(round int) string {
	if round == 0 {
		return "input"
	}
	return "round " + strconv.Itoa(round)
}

// maxForkHops bounds how many forks one request follows (each hop
// diverges further along its history, so a real chain ends well before).
const maxForkHops = 64

// follow moves call c, whose conversation is locked and loaded, to the
// conversation its history belongs to: the conversation itself, or the
// fork (of a fork …) its history diverges into, created and seeded when
// new. The conversation c ends on is locked, loaded and held; the others
// are unlocked and released.
func (p *Proxy) follow(ctx context.Context, c *call) error {
	for hop := 0; hop < maxForkHops; hop++ {
		cv := c.conv
		d, ok := diverge(cv.mirror, c.hist, c.req.side())
		if !ok {
			return nil
		}
		id := forkID(cv.id, c.hist, d)
		cv.mu.Unlock()
		fork := p.conversation(id)
		fork.mu.Lock()
		c.conv = fork
		if err := fork.load(ctx, p.opts.Store, p.rec); err != nil {
			p.logf("harness proxy: loading %s from the store: %v", fork.id, err)
		}
		if len(fork.mirror) == 0 {
			// A new fork. The parent is locked again, child first: no
			// request holds a parent while it locks a fork, so this
			// cannot deadlock. Its mirror only grows, so d still holds.
			cv.mu.Lock()
			s := cv.seedOf(d)
			cv.mu.Unlock()
			p.seedFork(ctx, fork, s)
		}
		p.release(cv)
		if err := fork.awaitInflight(ctx, c.hist); err != nil {
			return err
		}
	}
	p.logf("harness proxy: warning: conversation %s: more than %d forks in one request; recorded here", c.conv.id, maxForkHops)
	return nil
}

package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// Mirror claims. A round is recorded by the replica whose request first
// carries its results, a turn begun and ended by the one that first sees
// it so, and the replica serving the next request must know what that one
// added to its mirror (so it records only what is new and finds forks
// where they are) without waiting for those writes to reach the store.
// So each replica claims, with its request's decisions (and with the
// answer, what the answer adds), what its request added to its mirror:
// the mirror's shape before, then each turn begun, round recorded and
// turn ended, a round with a signature of its calls (a mirror claim,
// "m"); and once those writes are stored, a mark ("s"). The next replica applies another's mirror claim when its mirror
// has the shape the claim starts from and its request's history holds
// every turn and round the claim names, with the same signatures: it
// builds them from the history and the decisions the log holds, as it
// would have recorded them itself, and queues them as foreign writes.
// Its recorder skips those once the mark says the other replica stored
// them, and writes them itself (the store keeps one copy) when no mark
// comes within markWait while the log answers (that replica died with its
// queue). The replica's own writes queue behind them, so they reach the
// store after the rounds they follow, and nothing on the request's path
// waits for another replica's writes. A claim that does not fit (a
// history that forks from it, or is edited, or a claim lost while the log
// did not answer) falls back to waiting for the marks, up to replicaWait,
// and reading the conversation again from the store (reloadMirror).

// Kinds of claim-log keys of mirror claims: kind|replica|number.
const (
	claimMirror = "m"
	claimStored = "s"
)

// markWait bounds how long a recorder waits, while the log answers, for
// another replica's mark before it writes that replica's rounds itself.
const markWait = 10 * time.Second

// mirrorShape is where a mirror ends: its turns, the rounds of its last
// turn and whether that turn has ended. A mirror only grows.
type mirrorShape struct {
	Turns  int  `json:"t"`
	Rounds int  `json:"r"`
	Ended  bool `json:"e,omitempty"`
}

func shapeOf(mirror []*harness.Turn) mirrorShape {
	n := len(mirror)
	if n == 0 {
		return mirrorShape{}
	}
	t := mirror[n-1]
	return mirrorShape{Turns: n, Rounds: len(t.Rounds), Ended: t.Outcome != ""}
}

// precedes reports whether a mirror of shape s lacks something o holds.
func (s mirrorShape) precedes(o mirrorShape) bool {
	if s.Turns != o.Turns {
		return s.Turns < o.Turns
	}
	if s.Rounds != o.Rounds {
		return s.Rounds < o.Rounds
	}
	return !s.Ended && o.Ended
}

// mirrorAdd is one thing a replica added to its mirror: a turn begun
// (Round 0, At its start), a round (At its answer) or a turn's end (End
// its outcome, At its end).
type mirrorAdd struct {
	Turn  int             `json:"t"`
	Round int             `json:"r,omitempty"`
	End   harness.Outcome `json:"e,omitempty"`
	Sig   string          `json:"s,omitempty"`
	At    time.Time       `json:"at,omitzero"`
	Usage harness.Usage   `json:"u,omitzero"`
}

// next is the shape a mirror of shape s has once a is added.
func (a mirrorAdd) next(s mirrorShape) mirrorShape {
	switch {
	case a.End != "":
		return mirrorShape{Turns: a.Turn, Rounds: s.Rounds, Ended: true}
	case a.Round == 0:
		return mirrorShape{Turns: a.Turn}
	}
	return mirrorShape{Turns: a.Turn, Rounds: a.Round}
}

// foreignClaim is another replica's mirror claim not applied yet; mark is
// the key of the mark that says its writes are stored.
type foreignClaim struct {
	mark   string
	before mirrorShape
	adds   []mirrorAdd
}

func (f foreignClaim) after() mirrorShape {
	s := f.before
	for _, a := range f.adds {
		s = a.next(s)
	}
	return s
}

// inputSig and roundSig sign a turn's input and a round's calls (the
// positions diverge compares).
func inputSig(input string) string {
	sum := sha256.Sum256([]byte(input))
	return hex.EncodeToString(sum[:12])
}

func roundSig(m mark) string {
	h := sha256.New()
	m.writeSig(h)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// note adds a to what this replica claims it added to cv's mirror (with
// a claim log only); called before the mirror changes, with cv locked.
func (cv *conversation) note(a mirrorAdd) {
	if len(cv.delta) == 0 {
		cv.deltaFrom = shapeOf(cv.mirror)
	}
	cv.delta = append(cv.delta, a)
}

// beginTurn appends turn mt to cv's mirror and queues its begin.
func (p *Proxy) beginTurn(cv *conversation, mt *harness.Turn) {
	if p.replicas.log != nil {
		cv.note(mirrorAdd{Turn: mt.Index, Sig: inputSig(mt.Input), At: mt.Started})
	}
	cv.mirror = append(cv.mirror, mt)
	p.queueWrite(cv, op{kind: opBegin, turn: *mt}, nil)
}

// closeTurn ends turn mt of cv's mirror and queues its end.
func (p *Proxy) closeTurn(cv *conversation, mt *harness.Turn, outcome harness.Outcome, at time.Time) {
	if p.replicas.log != nil {
		cv.note(mirrorAdd{Turn: mt.Index, End: outcome, At: at})
	}
	mt.Outcome, mt.Ended = outcome, at
	p.queueWrite(cv, op{kind: opEnd, turn: *mt, fill: p.fillTurnEnd(cv, mt)}, nil)
}

// takeDelta returns the mirror claim of what this replica added to cv's
// mirror since its last one, and the key of its mark (ok false: nothing
// added). Called with cv locked.
func (p *Proxy) takeDelta(cv *conversation) (key, markKey string, v claimValue, ok bool) {
	if len(cv.delta) == 0 {
		return "", "", claimValue{}, false
	}
	id := p.replicas.id + "|" + strconv.FormatInt(p.replicas.claims.Add(1), 10)
	from := cv.deltaFrom
	v = claimValue{Before: &from, Adds: cv.delta}
	cv.delta = nil
	return claimMirror + "|" + id, claimStored + "|" + id, v, true
}

// loadFromLog builds the mirror of a conversation first seen here from
// its log alone, when the log's mirror claims start from an empty
// mirror and all apply to c's history (the decisions, clears and answer
// times are the log's too). Otherwise the mirror holds what applied, and
// the conversation is to be read from the store. Called with the
// conversation locked.
func (p *Proxy) loadFromLog(c *call) bool {
	cv := c.conv
	if len(cv.foreign) == 0 || cv.foreign[0].before != (mirrorShape{}) || !p.adopt(c) {
		return false
	}
	cv.loaded = true
	return true
}

// adopt applies, in log order, the mirror claims of other replicas that
// cv's mirror lacks, building their turns and rounds from c's history. It
// reports false when one does not fit (left in cv.foreign). Called with
// cv locked.
func (p *Proxy) adopt(c *call) bool {
	cv := c.conv
	for len(cv.foreign) > 0 {
		f := cv.foreign[0]
		cur := shapeOf(cv.mirror)
		switch {
		case !cur.precedes(f.after()):
			// The mirror holds it already (recorded here too, or read
			// from the store).
		case cur == f.before:
			if !p.applyClaimed(c, f) {
				return false
			}
		default:
			return false
		}
		cv.foreign = cv.foreign[1:]
	}
	return true
}

// applyClaimed adds the turns and rounds of mirror claim f to the mirror,
// from c's history, when every one of them is there with its signature
// (else it changes nothing and reports false). Unless f's mark has been
// read, they are queued as foreign writes.
func (p *Proxy) applyClaimed(c *call, f foreignClaim) bool {
	cv, h := c.conv, c.hist
	var steps []func(guard storedElsewhere)
	s := f.before
	for _, a := range f.adds {
		if a.Turn < 1 || a.Turn > len(h.Turns) {
			return false
		}
		ht := h.Turns[a.Turn-1]
		switch {
		case a.End != "":
			if a.Turn != s.Turns || s.Ended {
				return false
			}
			steps = append(steps, func(g storedElsewhere) {
				mt := cv.mirror[a.Turn-1]
				mt.Outcome, mt.Ended = a.End, a.At
				p.queueForeign(cv, op{kind: opEnd, turn: *mt, foreign: g, fill: p.fillTurnEnd(cv, mt)})
			})
		case a.Round == 0:
			if a.Turn != s.Turns+1 || a.Sig != inputSig(ht.Input) {
				return false
			}
			steps = append(steps, func(g storedElsewhere) {
				mt := ht.harnessTurn(a.Turn)
				mt.Started = a.At
				cv.mirror = append(cv.mirror, mt)
				p.queueForeign(cv, op{kind: opBegin, turn: *mt, foreign: g})
			})
		default:
			if a.Turn != s.Turns || s.Ended || a.Round != s.Rounds+1 || a.Round > len(ht.Rounds) {
				return false
			}
			m := histMarks(h).at(a.Turn-1, a.Round)
			round, ok := p.roundOf(c, ht.Rounds[a.Round-1], a)
			if !ok || a.Sig != roundSig(m) {
				return false
			}
			steps = append(steps, func(g storedElsewhere) {
				mt := cv.mirror[a.Turn-1]
				var fill func(context.Context, *op)
				if a.At.IsZero() {
					// Claimed before its answer was read: as known here.
					k := roundKey{a.Turn, a.Round}
					round.Usage, round.Answered = cv.usage[k], cv.times[k]
					fill = p.fillRound(cv, k)
				}
				mt.Rounds = append(mt.Rounds, round)
				mt.Usage = mt.Usage.Add(round.Usage)
				p.queueForeign(cv, op{kind: opRound, turn: *mt, round: round, foreign: g, fill: fill})
			})
		}
		s = a.next(s)
	}
	var guard storedElsewhere // nil: stored already
	if !cv.marks[f.mark] {
		guard = &markGuard{p: p, cv: cv, mark: f.mark}
	}
	for _, step := range steps {
		step(guard)
	}
	return true
}

// queueForeign queues foreign write o unless its guard is nil (the
// replica that claimed it has stored it).
func (p *Proxy) queueForeign(cv *conversation, o op) {
	if o.foreign != nil {
		p.queueWrite(cv, o, nil)
	}
}

// roundOf builds the round a claims from the history's round r, with the
// decisions of its results (false when one is not known here).
func (p *Proxy) roundOf(c *call, r *histRound, a mirrorAdd) (*harness.Round, bool) {
	round := &harness.Round{Index: a.Round, Assistant: r.Assistant, Usage: a.Usage, Answered: a.At}
	for _, res := range r.Results {
		if res.Content.End <= res.Content.Start {
			continue
		}
		content := c.in[res.Content.Start:res.Content.End]
		fast := res.sum
		if fast == 0 {
			fast = maphash.Bytes(p.seed, content)
		}
		d, _ := c.conv.lookup(res.CallID, fast, content)
		if d == nil || d.res == nil {
			return nil, false
		}
		fillBare(d, res, c.in)
		round.Results = append(round.Results, d.res)
	}
	return round, true
}

// unmarked reports whether a mirror claim cv could not apply lacks its
// mark. Called with cv locked.
func (cv *conversation) unmarked() bool {
	for _, f := range cv.foreign {
		if !cv.marks[f.mark] {
			return true
		}
	}
	return false
}

// markGuard guards the foreign writes of a mirror claim: they are
// stored once the claim's mark is in the log (awaitMark, asked once).
type markGuard struct {
	p    *Proxy
	cv   *conversation
	mark string
	once sync.Once
	done atomic.Bool
	ok   bool
}

func (g *markGuard) settled() bool {
	if g.done.Load() {
		return true
	}
	g.cv.mu.Lock()
	defer g.cv.mu.Unlock()
	return g.cv.marks[g.mark]
}

func (g *markGuard) stored(ctx context.Context) bool {
	g.once.Do(func() {
		g.ok = g.p.awaitMark(ctx, g.cv, g.mark)
		g.done.Store(true)
	})
	return g.ok
}

// awaitMark waits until cv's log holds mark (awaitEntry); a watch that
// hears the mark ends the wait.
func (p *Proxy) awaitMark(ctx context.Context, cv *conversation, mark string) bool {
	cv.mu.Lock()
	seen, seq := cv.marks[mark], cv.claimSeq
	cv.mu.Unlock()
	if seen {
		return true
	}
	return p.awaitEntry(ctx, cv, mark, seq, func([]byte) bool { return true }, true)
}

// pollEvery is how often a wait for a claim-log entry reads the log: every
// 20 ms, or, when the store tells of new entries (w not nil), every few
// seconds as a safety net while it says nothing.
func pollEvery(w store.ClaimWatcher) time.Duration {
	if w != nil {
		return 3 * time.Second
	}
	return 20 * time.Millisecond
}

// watchClaims watches conv's log for keys of prefix when the store can
// (nil channel otherwise).
func watchClaims(w store.ClaimWatcher, conv, prefix string) (<-chan []string, func()) {
	if w == nil {
		return nil, func() {}
	}
	return w.WatchClaims(conv, prefix)
}

// waitChanged waits until changed wakes or d passes and returns the keys
// the wake heard (nil when d passed or the wake named none); it reports
// false when ctx ended.
func waitChanged(ctx context.Context, changed <-chan []string, d time.Duration) ([]string, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case keys := <-changed:
		return keys, true
	case <-t.C:
	case <-ctx.Done():
		return nil, false
	}
	return nil, true
}

// claimRetrying claims entries in conv's log, trying every probeEvery
// while the log does not answer, for up to replicaPending or until the
// proxy closes.
func (p *Proxy) claimRetrying(conv string, keys []string, vals []claimValue) bool {
	ctx, cancel := context.WithTimeout(context.Background(), replicaPending)
	defer cancel()
	for {
		if _, ok := p.claim(ctx, conv, keys, vals); ok {
			return true
		}
		if p.rec.isClosing() || !sleepCtx(ctx, probeEvery) {
			return false
		}
	}
}

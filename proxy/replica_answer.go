package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// Answers off the next request's path. A request records the round its
// history carries first (the previous model call's answer and the results
// the client ran for it), and when another replica served that call the
// round's usage and answer time are in that replica's answer claim, which
// it writes once its response has ended: the client's next request, on
// this replica, may come before it. Waiting for it would put a claim-log
// round trip on every request of a conversation a balancer spreads. So
// the request goes on without it: it claims what it adds to its mirror
// with its decisions, before it forwards (so the replica after it has it
// as early), and the round is queued with its usage to fill. The recorder
// fills it from the answer's claim before it writes the round (waiting
// for the claim off the request's path), and the end of a turn waits for
// the usage of every round it sums. A request waits for another replica's
// answer only when it needs what the answer tells: the end of a turn (a
// round in an earlier turn than the request's: that replica's answer
// claim holds the turn's last round), or the pause since the answer,
// when the call started longer ago than the shortest idle clear (so an
// idle clear is never measured from an older answer).

// heldOp is a write a request queued while its writes are held, with the
// decisions of a round's results (their bytes are the claim's winner's
// once the request's claims are made).
type heldOp struct {
	o    op
	decs []*decision
}

// holdWrites makes cv's writes wait in cv.held until releaseWrites.
// Called with cv locked.
func (cv *conversation) holdWrites() {
	cv.held = new([]heldOp)
}

// queueWrite queues o for cv's store, or holds it (decs are a round's
// results' decisions). Called with cv locked.
func (p *Proxy) queueWrite(cv *conversation, o op, decs []*decision) {
	if cv.held != nil {
		*cv.held = append(*cv.held, heldOp{o: o, decs: decs})
		return
	}
	p.rec.add(cv.id, o)
}

// releaseWrites queues the writes held since holdWrites, each round with
// the results its decisions now hold. Called with cv locked.
func (p *Proxy) releaseWrites(cv *conversation) {
	held := cv.held
	cv.held = nil
	if held == nil {
		return
	}
	for _, h := range *held {
		if h.o.kind == opRound && len(h.decs) == len(h.o.round.Results) {
			for i, d := range h.decs {
				h.o.round.Results[i] = d.res
			}
		}
		p.rec.add(cv.id, h.o)
	}
}

// answerPending reports whether round k was begun by another replica
// whose answer this replica has not read. Called with cv locked.
func (cv *conversation) answerPending(k roundKey) bool {
	if _, ok := cv.times[k]; ok {
		return false
	}
	_, ok := cv.started[k]
	return ok
}

// fillRound returns, for round k of cv queued now, the recorder's fill of
// its usage and answer time when another replica's answer holds them
// (nil when known). Called with cv locked.
func (p *Proxy) fillRound(cv *conversation, k roundKey) func(context.Context, *op) {
	if !cv.answerPending(k) {
		return nil
	}
	cv.unfilled[k] = true
	return func(ctx context.Context, o *op) {
		v, ok := p.awaitAnswer(ctx, cv, k)
		if !ok {
			return // that replica died before its claim: the round stays without
		}
		r := *o.round
		r.Usage, r.Answered = v.Usage, v.At
		o.round = &r
	}
}

// fillTurnEnd returns, for the end of turn mt queued now, the recorder's
// fill of the usage of the turn's rounds still waiting for theirs (nil
// when none). Called with cv locked.
func (p *Proxy) fillTurnEnd(cv *conversation, mt *harness.Turn) func(context.Context, *op) {
	var keys []roundKey
	for _, r := range mt.Rounds {
		if k := (roundKey{mt.Index, r.Index}); cv.unfilled[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return func(ctx context.Context, o *op) {
		for _, k := range keys {
			if v, ok := p.awaitAnswer(ctx, cv, k); ok {
				o.turn.Usage = o.turn.Usage.Add(v.Usage)
			}
		}
	}
}

// answerFilled adds a round's answer, read from the log, to the turn of cv's
// mirror that holds it without its usage. Called with cv locked.
func (cv *conversation) answerFilled(k roundKey, u harness.Usage) {
	if !cv.unfilled[k] {
		return
	}
	delete(cv.unfilled, k)
	if k.turn <= len(cv.mirror) {
		mt := cv.mirror[k.turn-1]
		mt.Usage = mt.Usage.Add(u)
	}
}

// awaitAnswer waits, as awaitMark does, until cv's log holds the answer
// claim of round k, and returns it (ok false when it did not come).
func (p *Proxy) awaitAnswer(ctx context.Context, cv *conversation, k roundKey) (claimValue, bool) {
	cv.mu.Lock()
	at, known := cv.times[k]
	u := cv.usage[k]
	seq := cv.claimSeq
	cv.mu.Unlock()
	if known {
		return claimValue{At: at, Usage: u}, true
	}
	key := roundClaimKey(claimAnswer, k)
	var v claimValue
	ok := p.awaitEntry(ctx, cv, key, seq, func(raw []byte) bool {
		return json.Unmarshal(raw, &v) == nil
	}, false)
	return v, ok
}

// needsAnswer reports whether a request with history h must wait for
// the answers of pending (rounds another replica began, with their
// starts, whose answers are not claimed yet): one the history carries in
// an earlier turn than its last, or one begun longer ago than idle (the
// shortest pause an idle clear takes; 0: none does). Called with cv
// locked.
func needsAnswer(h *history, pending map[roundKey]time.Time, now time.Time, idle time.Duration) bool {
	for k, at := range pending {
		if k.turn > len(h.Turns) || k.round > len(h.Turns[k.turn-1].Rounds) {
			continue // not carried: the request does not follow it
		}
		if k.turn < len(h.Turns) || (idle > 0 && now.Sub(at) >= idle) {
			return true
		}
	}
	return false
}

// idleFloor is the shortest pause after which a request of this proxy may
// be cleared as idle (0: never).
func (p *Proxy) idleFloor() time.Duration {
	switch {
	case p.opts.NoClearWhenIdle:
		return 0
	case p.opts.ClearWhenIdle > 0:
		return p.opts.ClearWhenIdle
	}
	return shortestCacheLifetime
}

// lastAnswer is when cv last answered as far as this replica can tell: its
// last answer read, or the start of a later model call another replica
// has not answered yet (that answer came after it). Called with cv
// locked.
func (cv *conversation) lastAnswer() time.Time {
	t := cv.answered
	for k, at := range cv.started {
		if at.After(t) && cv.answerPending(k) {
			t = at
		}
	}
	return t
}

// noteMarks records the marks among entries read off the request's path,
// so a wait for one of them need not read the log again.
func (p *Proxy) noteMarks(cv *conversation, entries []store.Claim) {
	var marks []string
	for _, e := range entries {
		if strings.HasPrefix(e.Key, claimStored+"|") {
			marks = append(marks, e.Key)
		}
	}
	if len(marks) == 0 {
		return
	}
	cv.mu.Lock()
	for _, m := range marks {
		cv.marks[m] = true
	}
	cv.mu.Unlock()
}

// awaitEntry waits until cv's log, read from seq on, holds key: for up to
// markWait while the log answers (an outage does not count: the replica
// holding the writes waits for the store too), outageBudget in all. found
// reads the entry's value (false: keep waiting). With a store that
// watches its log, the log is read when the wait begins and again only
// when the watch hears the key, or cannot tell what was claimed, or the
// wait's bound passes; heardEnough ends the wait on hearing the key,
// without reading its value. The marks a read finds are remembered.
func (p *Proxy) awaitEntry(ctx context.Context, cv *conversation, key string, seq int64, found func([]byte) bool, heardEnough bool) bool {
	end := time.Now().Add(outageBudget)
	var answering time.Time // since when the log answers
	watch, _ := p.replicas.log.(store.ClaimWatcher)
	markWait := time.Duration(p.replicas.markWait.Load())
	wait := pollEvery(watch)
	if watch != nil {
		// The watch hears the key, or wakes when it cannot tell: the
		// safety read waits until the wait would end anyway.
		wait = max(wait, markWait)
	}
	for time.Now().Before(end) {
		changed, stop := watchClaims(watch, cv.id, key)
		rctx, cancel := context.WithTimeout(ctx, replicaTimeout)
		entries, err := p.replicas.log.Claims(rctx, cv.id, seq)
		cancel()
		p.noteMarks(cv, entries)
		for _, e := range entries {
			if e.Key == key && found(e.Value) {
				stop()
				return true
			}
			seq = e.Seq
		}
		switch {
		case err != nil:
			answering = time.Time{}
		case answering.IsZero():
			answering = time.Now()
		case time.Since(answering) > markWait:
			stop()
			return false
		}
		// A key heard but not this one (its number longer) reads the
		// log again, as a wake that names no key does.
		heard, ok := waitChanged(ctx, changed, wait)
		stop()
		if !ok {
			return false
		}
		if slices.Contains(heard, key) && heardEnough {
			return true
		}
		if watch == nil {
			wait = min(2*wait, 500*time.Millisecond)
		}
	}
	return false
}

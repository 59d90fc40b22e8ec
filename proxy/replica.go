package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// Replicas. With Options.Shared, several proxy processes serve the same
// conversations from one store, a client's requests landing on any of
// them. What one replica decides must be what every other one sends, so
// each decision goes through the store's claim log (store.Claimer) before
// the request is forwarded: a result's model copy and an idle clear are
// claimed first-writer-wins, and a replica that loses adopts the winner's
// bytes. Each replica also claims the start ("q") and the answer ("a") of
// every model call, with its usage and time, so the replica that serves
// the next request knows when the conversation last answered (the idle
// clear's pause) and what the round cost, and with the answer what the
// request added to its mirror (replica_mirror.go). At the start of every
// request a replica reads the log's entries it has not seen and applies
// them, so its mirror (and with it the rounds it records and the forks it
// finds) matches what the other replicas saw, without waiting for their
// writes to reach the store.
//
// Every call to the store here is bounded by replicaTimeout and fails
// open: the request goes on with the decisions this replica knows, and a
// result it could not claim is sent as the client sent it (see
// claimDecisions).

// errStoreDown is the claim log left alone during an outage.
var errStoreDown = errors.New("the store did not answer a moment ago")

// replicaTimeout bounds each claim-log call on the request path.
const replicaTimeout = 10 * time.Second

// replicaWait bounds how long a request waits for another replica to
// claim the answer of a round its history carries (the client may send
// its next request before that replica has finished recording).
const replicaWait = 5 * time.Second

// Kinds of claim-log keys: key = kind|call id|content hash, or
// kind|turn|round.
const (
	claimDecision = "d"
	claimClear    = "c"
	claimStart    = "q"
	claimAnswer   = "a"
	// claimUnchanged marks a result sent as the client sent it while the
	// log did not answer (replica_outage.go): every replica sends it so
	// from then on, whatever bytes its decision holds.
	claimUnchanged = "u"
	// claimTokens carries a decided result's token count, claimed with
	// the answer of the request that cut it (replica_tokens.go).
	claimTokens = "n"
)

// claimValue is the JSON of a claim-log entry.
type claimValue struct {
	// By is the replica that wrote it.
	By string `json:"by"`
	// Res, Out and Opaque are a decision's (claimDecision).
	Res    *harness.ToolResult `json:"res,omitempty"`
	Out    []byte              `json:"out,omitempty"`
	Opaque bool                `json:"opaque,omitempty"`
	// Text and Locator are a clear's placeholder and file.
	Text    string `json:"text,omitempty"`
	Locator string `json:"locator,omitempty"`
	// Bare says Res is without its content (replica_bare.go).
	Bare bool `json:"bare,omitempty"`
	// Tokens is a decided result's token count (claimTokens; a decision's
	// own claim carries it when it was counted before).
	Tokens int64 `json:"tok,omitempty"`
	// At and Usage are a model call's start or answer.
	At    time.Time     `json:"at,omitzero"`
	Usage harness.Usage `json:"usage,omitzero"`
	// Before and Adds are a mirror claim's (replica_mirror.go).
	Before *mirrorShape `json:"before,omitempty"`
	Adds   []mirrorAdd  `json:"adds,omitempty"`
}

// replicas is the proxy's side of the claim log.
type replicas struct {
	log store.Claimer // nil: not shared
	id  string
	// down is set while the store does not answer (logged once);
	// failedAt (Unix nanoseconds) is its last failure, or the last call
	// let through since (replicaSkip).
	down     atomic.Bool
	failedAt atomic.Int64
	// markWait is how long a recorder waits for another replica's mark
	// while the log answers (markWait; tests shorten it).
	markWait atomic.Int64
	// answerWait bounds how long a response's end waits for its answer's
	// claim (answerClaimWait; tests lengthen it).
	answerWait atomic.Int64
	// claims numbers this process's mirror claims.
	claims atomic.Int64
}

// newReplicas returns the claim-log state of a proxy on st.
func newReplicas(st store.Store, shared bool) *replicas {
	r := &replicas{}
	r.markWait.Store(int64(markWait))
	r.answerWait.Store(int64(answerClaimWait))
	if c, ok := st.(store.Claimer); ok && shared {
		r.log = c
		var b [6]byte
		_, _ = rand.Read(b[:])
		r.id = hex.EncodeToString(b[:])
	}
	return r
}

// failed logs the first failure of an outage; ok logs its end.
func (p *Proxy) replicaFailed(what string, err error) {
	p.replicas.failedAt.Store(time.Now().UnixNano())
	if p.replicas.down.CompareAndSwap(false, true) {
		p.logf("harness proxy: the store does not answer (%s: %v): forwarding with the decisions this replica knows; claims resume when it is back", what, err)
	}
}

func (p *Proxy) replicaOK() {
	if p.replicas.down.CompareAndSwap(true, false) {
		p.logf("harness proxy: the store answers again: claims resumed")
	}
}

// claim writes entries to conv's log in one call, bounded and failing
// open (ok false): it returns the value that holds each key, this
// replica's or the one another replica claimed first.
func (p *Proxy) claim(ctx context.Context, conv string, keys []string, vals []claimValue) ([]claimValue, bool) {
	return p.claimQuiet(ctx, conv, keys, vals, false)
}

// claimQuiet is claim; quiet says no replica waits for these entries
// (store.Claim.Quiet): a request's own claim, whose entries the next
// request finds in the log, since they are written before the call is
// forwarded.
func (p *Proxy) claimQuiet(ctx context.Context, conv string, keys []string, vals []claimValue, quiet bool) ([]claimValue, bool) {
	if p.replicaSkip() || len(keys) == 0 {
		return nil, false
	}
	entries := make([]store.Claim, len(keys))
	for i, k := range keys {
		vals[i].By = p.replicas.id
		raw, err := json.Marshal(vals[i])
		if err != nil {
			return nil, false
		}
		entries[i] = store.Claim{Key: k, Value: raw, Quiet: quiet}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaTimeout)
	defer cancel()
	var got []store.Claim
	err := p.retryWhileAnswering(ctx, func() (err error) {
		got, err = p.replicas.log.Claim(ctx, conv, entries)
		return err
	})
	if err != nil {
		p.replicaFailed("claiming "+strconv.Itoa(len(keys))+" entries", err)
		return nil, false
	}
	p.replicaOK()
	out := make([]claimValue, len(keys))
	for i, c := range got {
		out[i] = vals[i]
		if c.Won {
			continue
		}
		var won claimValue
		if err := json.Unmarshal(c.Value, &won); err != nil {
			return nil, false
		}
		out[i] = won
	}
	return out, true
}

// retryWhileAnswering runs call, and again, up to brokenConns times,
// while it fails and the store answers: a restart breaks every pooled
// connection, each failing one call before the pool replaces it, and
// such failures are no outage (the recorder's writes are retried for the
// same reason, applyOrWait).
func (p *Proxy) retryWhileAnswering(ctx context.Context, call func() error) error {
	err := call()
	for i := 0; err != nil && i < brokenConns && p.rec.probe != nil && p.rec.probe(ctx) == nil; i++ {
		err = call()
	}
	return err
}

// brokenConns is how many times a claim-log call is tried again while
// the store answers: the connections of a store's pool for reads and
// claims (8 for PostgreSQL), which a restart may all have broken.
const brokenConns = 8

// resultKey is the claim-log key of a result's decision or clear.
func resultKey(kind string, d *decision) string {
	return kind + "|" + d.res.CallID + "|" + hex.EncodeToString(d.hash[:])
}

// roundClaimKey is the claim-log key of a model call's start or answer.
func roundClaimKey(kind string, k roundKey) string {
	return kind + "|" + strconv.Itoa(k.turn) + "|" + strconv.Itoa(k.round)
}

// claimBatch is the entries a request writes to the claim log in one
// call, and what each applies once it holds (nil: nothing).
type claimBatch struct {
	keys  []string
	vals  []claimValue
	apply []func(won claimValue)
	// unclaimed are the decisions no replica may know if the call fails.
	unclaimed []*decision
}

func (b *claimBatch) add(key string, v claimValue, apply func(claimValue)) {
	b.keys, b.vals, b.apply = append(b.keys, key), append(b.vals, v), append(b.apply, apply)
}

// decision adds what d lacks in the log: its decision (adopting another
// replica's bytes for it), the mark that it went upstream unchanged
// (replica_outage.go), its idle clear.
func (b *claimBatch) decision(d *decision, self string) {
	res, bare := d.res, false
	if !d.claimed {
		res, bare = bareCopy(d)
	}
	switch {
	case d.unchanged:
		if !d.claimed {
			b.add(resultKey(claimDecision, d), claimValue{Res: res, Bare: bare, Opaque: d.opaque}, nil)
		}
		b.add(resultKey(claimUnchanged, d), claimValue{}, func(claimValue) { d.claimed, d.unchanged = true, false })
	case !d.claimed:
		b.unclaimed = append(b.unclaimed, d)
		b.add(resultKey(claimDecision, d), claimValue{Res: res, Bare: bare, Out: d.out, Opaque: d.opaque, Tokens: atomic.LoadInt64(&d.tokens)}, func(won claimValue) {
			d.claimed = true
			if won.By != self && won.Res != nil {
				if won.Bare {
					won.Res = withContentOf(won.Res, d.res)
				}
				d.res, d.opaque = won.Res, won.Opaque
				if won.Tokens != 0 {
					atomic.StoreInt64(&d.tokens, won.Tokens)
				}
				if d.cleared == nil {
					d.out = won.Out
				}
			}
		})
	}
	if d.cleared != nil && !d.clearClaimed {
		loc := d.cleared.Cuts[len(d.cleared.Cuts)-1].Locator
		b.add(resultKey(claimClear, d), claimValue{Text: d.cleared.ModelText(), Locator: loc, Out: d.out}, func(won claimValue) {
			d.clearClaimed = true
			if won.By != self {
				d.out, d.cleared = won.Out, clearedCopy(d.res, won.Text, won.Locator)
			}
		})
	}
}

// claimDecisions claims, in one call to the log, the decisions and idle
// clears this request made (and those an earlier request could not
// claim) and the start of its model call, adopting the bytes of any
// another replica claimed first. Called with the conversation locked,
// before the edits are built. What cannot be claimed is sent as the
// client sent it (see replica_outage.go).
func (p *Proxy) claimDecisions(ctx context.Context, c *call) {
	if p.replicas.log == nil {
		return
	}
	cv := c.conv
	last := lastRound(c.hist)
	b := &claimBatch{}
	for _, r := range c.hist.Results {
		d := r.dec
		if d == nil || d.res == nil {
			continue
		}
		if !d.claimed && cv.claimSeq > 0 && [2]int{r.Turn, r.Round} != last {
			// Sent before, yet not in the log: sent while it did not
			// answer, so as the client sent it.
			d.sendUnchanged()
		}
		if !d.claimed && d.out != nil && atomic.LoadInt64(&d.tokens) == 0 && r.Content.End > r.Content.Start {
			c.counts = append(c.counts, p.countTokens(cv, d, c.in[r.Content.Start:r.Content.End]))
		}
		b.decision(d, p.replicas.id)
	}
	// The start of the model call, so the replica serving the next
	// request waits for its answer.
	start, at := nextRound(c.hist), p.now()
	b.add(roundClaimKey(claimStart, start), claimValue{At: at}, nil)
	won, ok := p.claimQuiet(ctx, cv.id, b.keys, b.vals, true)
	if !ok {
		for _, d := range b.unclaimed {
			d.sendUnchanged()
		}
		cv.pendingStarts[start] = at
		return
	}
	for i, f := range b.apply {
		if f != nil {
			f(won[i])
		}
	}
}

// syncReplicas reads the entries of the conversation's claim log this
// replica has not seen and applies them: decisions and clears other
// replicas made, the start and answer of their model calls, what they
// added to their mirrors (adopt; when that does not fit the history, the
// conversation's turns are read again from the store once they are
// stored). A round the history carries whose answer another replica has
// not claimed yet, or whose start no replica has (it was answered while
// the log did not answer: its replica claims it once the log answers), is
// waited for (up to replicaWait). A conversation not in memory yet is
// built from the log when it holds every mirror claim from the start,
// and read from the store otherwise. Called with the conversation
// locked; it fails open.
func (p *Proxy) syncReplicas(ctx context.Context, c *call) {
	if p.replicas.log == nil {
		return
	}
	cv := c.conv
	read := p.awaitClaims(ctx, c)
	if !cv.loaded && !(read && p.loadFromLog(c)) {
		if err := cv.load(ctx, p.opts.Store, p.rec); err != nil {
			p.logf("harness proxy: loading %s from the store: %v", cv.id, err)
		}
	}
	if read && !p.adopt(c) {
		p.reloadUnfit(ctx, cv)
	}
}

// awaitClaims reads the new entries of c's conversation's log and waits
// for the answers its history carries (see syncReplicas). It reports
// false when the log did not answer, or ctx ended.
func (p *Proxy) awaitClaims(ctx context.Context, c *call) bool {
	cv := c.conv
	foreign := false
	deadline, unstartedDeadline := time.Now().Add(replicaWait), time.Now().Add(unstartedWait)
	watch, _ := p.replicas.log.(store.ClaimWatcher)
	for {
		changed, stop := watchClaims(watch, cv.id, "")
		f, pending, err := p.readClaims(ctx, cv)
		if err != nil {
			stop()
			p.replicaFailed("reading the claim log", err)
			return false
		}
		p.replicaOK()
		foreign = foreign || f
		now := time.Now()
		wait := carries(c.hist, pending) && now.Before(deadline)
		if !wait && !(cv.unstarted(c.hist) && now.Before(unstartedDeadline)) {
			stop()
			break
		}
		ok := cv.pollPauseUntil(ctx, changed, pollEvery(watch))
		stop()
		if !ok {
			return false
		}
	}
	if foreign {
		// The request before this one was another replica's: what it
		// sent is not this replica's last request, so the next check for
		// cache breaks has nothing of its own to compare with.
		cv.prevIn, cv.prevOut = nil, nil
		cv.alternates = true
	}
	return true
}

// pollPause lets go of cv for one interval between two reads of its claim
// log; it reports false when ctx ended. Called with cv locked.
func (cv *conversation) pollPause(ctx context.Context) bool {
	return cv.pollPauseUntil(ctx, nil, pollEvery(nil))
}

// pollPauseUntil is pollPause that lasts d, or until changed wakes.
func (cv *conversation) pollPauseUntil(ctx context.Context, changed <-chan []string, d time.Duration) bool {
	cv.mu.Unlock()
	_, ok := waitChanged(ctx, changed, d)
	cv.mu.Lock()
	return ok
}

// reloadUnfit reads cv's turns again from the store once the mirror
// claims adopt could not apply are stored (up to replicaWait). Called
// with cv locked.
func (p *Proxy) reloadUnfit(ctx context.Context, cv *conversation) {
	for deadline := time.Now().Add(replicaWait); cv.unmarked() && time.Now().Before(deadline); {
		if !cv.pollPause(ctx) {
			return
		}
		if _, _, err := p.readClaims(ctx, cv); err != nil {
			p.replicaFailed("reading the claim log", err)
			return
		}
	}
	cv.foreign = nil
	if err := p.reloadMirror(ctx, cv); err != nil {
		p.replicaFailed("reloading "+cv.id, err)
	}
}

// carries reports whether h holds an answered round of pending (rounds
// another replica started and has not answered).
func carries(h *history, pending map[roundKey]bool) bool {
	for k := range pending {
		if k.turn <= len(h.Turns) && k.round <= len(h.Turns[k.turn-1].Rounds) {
			return true
		}
	}
	return false
}

// readClaims applies the new entries of cv's log. It reports whether
// another replica wrote any, and the rounds started by another replica
// whose answers are not claimed yet.
func (p *Proxy) readClaims(ctx context.Context, cv *conversation) (bool, map[roundKey]bool, error) {
	if p.replicaSkip() {
		return false, nil, errStoreDown
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaTimeout)
	defer cancel()
	var entries []store.Claim
	err := p.retryWhileAnswering(rctx, func() (err error) {
		entries, err = p.replicas.log.Claims(rctx, cv.id, cv.claimSeq)
		return err
	})
	if err != nil {
		return false, nil, err
	}
	foreign := false
	for _, e := range entries {
		cv.claimSeq = e.Seq
		var v claimValue
		if json.Unmarshal(e.Value, &v) != nil {
			continue
		}
		if v.By != p.replicas.id {
			foreign = true
		}
		cv.applyClaim(e.Key, &v, v.By == p.replicas.id)
	}
	pending := map[roundKey]bool{}
	for k := range cv.started {
		if _, ok := cv.times[k]; !ok {
			pending[k] = true
		}
	}
	return foreign, pending, nil
}

// applyClaim applies one log entry to the conversation; own marks this
// replica's.
func (cv *conversation) applyClaim(key string, v *claimValue, own bool) {
	parts := strings.Split(key, "|")
	if len(parts) != 3 {
		return
	}
	switch parts[0] {
	case claimDecision, claimClear, claimUnchanged, claimTokens:
		raw, err := hex.DecodeString(parts[2])
		if err != nil || len(raw) != 32 {
			return
		}
		var d *decision
		for _, x := range cv.decided[parts[1]] {
			if string(x.hash[:]) == string(raw) {
				d = x
			}
		}
		if parts[0] == claimTokens {
			if d != nil && v.Tokens > 0 {
				atomic.CompareAndSwapInt64(&d.tokens, 0, v.Tokens)
			}
			return
		}
		if parts[0] == claimDecision && d != nil && d.unchanged {
			d.claimed = true // sent unchanged: this replica marks it so
			return
		}
		if parts[0] == claimDecision && v.Res != nil {
			if d == nil {
				d = &decision{}
				copy(d.hash[:], raw)
				cv.decided[parts[1]] = append(cv.decided[parts[1]], d)
			}
			switch {
			case v.Bare && d.res != nil && !d.res.Partial:
				v.Res = withContentOf(v.Res, d.res)
			case v.Bare:
				v.Res.Partial, d.bare = true, true
			default:
				d.bare = false
			}
			d.res, d.out, d.opaque, d.claimed = v.Res, v.Out, v.Opaque, true
			if v.Tokens != 0 {
				atomic.StoreInt64(&d.tokens, v.Tokens)
			}
		}
		if parts[0] == claimUnchanged && d != nil && d.res != nil {
			d.sendUnchanged()
			d.claimed, d.unchanged = true, false
		}
		if parts[0] == claimClear && d != nil && d.res != nil {
			d.out, d.cleared, d.clearClaimed = v.Out, clearedCopy(d.res, v.Text, v.Locator), true
		}
	case claimMirror:
		if !own && v.Before != nil {
			cv.foreign = append(cv.foreign, foreignClaim{mark: claimStored + "|" + parts[1] + "|" + parts[2], before: *v.Before, adds: v.Adds})
		}
	case claimStored:
		cv.marks[key] = true
	case claimStart, claimAnswer:
		t, err1 := strconv.Atoi(parts[1])
		r, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			return
		}
		k := roundKey{t, r}
		if parts[0] == claimStart {
			if k.turn > cv.maxStarted.turn || (k.turn == cv.maxStarted.turn && k.round > cv.maxStarted.round) {
				cv.maxStarted = k
			}
			if !own {
				cv.started[k] = true
			}
			return
		}
		cv.times[k] = v.At
		if _, ok := cv.usage[k]; !ok {
			cv.usage[k] = v.Usage
		}
		if v.At.After(cv.answered) {
			cv.answered = v.At
		}
	}
}

// claimAnswered claims, once the answer of c's model call is relayed, when
// it answered and what it cost, what the request added to the mirror
// (a mirror claim) and the token counts of the results it cut, for the
// replica that serves the next request; then,
// once those writes are stored, their mark (replica_mirror.go). With them
// goes whatever the conversation could not claim while the log did not
// answer (claimPending).
//
// The response's last bytes are relayed already. When another replica
// has served one of the conversation's requests (a balancer without
// affinity), or this is the conversation's first model call (nothing
// tells yet where its next request lands), its end waits for the first
// try of the claim (up to answerClaimWait, not during an outage), so the
// client's next request, on whichever replica, finds the answer claimed
// instead of waiting for it; a conversation one replica serves alone
// waits on its first answer only.
func (p *Proxy) claimAnswered(c *call) {
	if p.replicas.log == nil || c.conv == nil {
		return
	}
	cv := c.conv
	keys, vals := tokenClaims(c)
	cv.mu.Lock()
	if at, ok := cv.times[c.key]; ok && c.key.turn > 0 {
		keys, vals = append(keys, roundClaimKey(claimAnswer, c.key)), append(vals, claimValue{At: at, Usage: cv.usage[c.key]})
	}
	mkey, markKey, mv, added := p.takeDelta(cv)
	var stored <-chan bool
	if added {
		keys, vals = append(keys, mkey), append(vals, mv)
		// The writes of the claim, not the later ones: those may wait
		// for a mark of the replica that waits for this one.
		stored = p.rec.marker(cv.id)
	}
	pending := len(cv.pendingStarts) > 0
	// A conversation's first answer waits too: nothing tells yet whether
	// its next request lands here.
	wait := cv.alternates || c.key == roundKey{1, 1}
	cv.mu.Unlock()
	if len(keys) == 0 && !pending {
		return
	}
	// The retries and the mark are off the request's path; Flush and
	// Close wait for them.
	done, tried := p.track(), make(chan struct{})
	go func() {
		defer done()
		if pending {
			p.claimPending(cv)
		}
		ok := len(keys) > 0
		if ok {
			_, ok = p.claim(context.Background(), cv.id, keys, vals)
		}
		close(tried)
		if len(keys) == 0 || (!ok && !p.claimRetrying(cv.id, keys, vals)) || stored == nil {
			return
		}
		// No mark for writes that failed: the next replica writes them.
		select {
		case ok := <-stored:
			if ok {
				p.claimRetrying(cv.id, []string{markKey}, []claimValue{{}})
			}
		case <-time.After(outageBudget):
		}
	}()
	if wait && !pending && !p.replicas.down.Load() {
		select {
		case <-tried:
		case <-time.After(time.Duration(p.replicas.answerWait.Load())):
		}
	}
}

// answerClaimWait bounds how long a response's end waits for its answer's
// claim (claimAnswered): a slow store costs the next request its wait for
// the claim instead.
const answerClaimWait = time.Second

// reloadMirror reads the conversation's turns again from the store after
// another replica advanced it, and the decisions of its stored results
// this replica lacks. Called with the conversation locked.
func (p *Proxy) reloadMirror(ctx context.Context, cv *conversation) error {
	// This replica's own writes first (bounded: while the store does not
	// answer they wait for it, and the mirror stands meanwhile).
	fctx, cancel := context.WithTimeout(ctx, replicaWait)
	defer cancel()
	if p.rec.flushConv(fctx, cv.id) != nil {
		return nil // not a failure of the store: the mirror stands
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaTimeout)
	defer cancel()
	conv, err := p.opts.Store.Load(rctx, cv.id)
	if err != nil {
		return nil // not stored yet: the mirror stands
	}
	turns := conv.Turns
	if n := len(turns); n > 0 && turns[n-1].Outcome == store.Interrupted {
		turns[n-1].Outcome, turns[n-1].Ended = "", time.Time{}
	}
	if len(turns) < len(cv.mirror) {
		return nil // the store lags this replica's own queue
	}
	cv.mirror = turns
	for _, t := range turns {
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				cv.restoreMissing(res)
			}
		}
	}
	return nil
}

// restoreMissing restores a stored result's decision unless the
// conversation has it.
func (cv *conversation) restoreMissing(res *harness.ToolResult) {
	h, _ := res.Meta[metaHash].(string)
	for _, d := range cv.decided[res.CallID] {
		if hex.EncodeToString(d.hash[:]) == h {
			return
		}
	}
	cv.restore(res)
}

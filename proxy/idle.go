package proxy

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/canonjson"
	"github.com/agentharness/harness/internal/locator"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/tokens"
)

// The idle clear. A result's model copy is decided once so the upstream's
// prompt cache stays warm; but after a pause longer than the cache's
// lifetime the cache is gone, and rewriting old results costs nothing the
// next request would not pay anyway. So at a request that follows such a
// pause the proxy clears old results — the engine's rule, run by the
// engine's own policy (policy.CompactPolicy.ClearWhenIdle) over a view of
// the proxy's mirror of the conversation: every result outside the newest
// DefaultCompactClearOldKeepRounds rounds and the working set — and each
// cleared result's decision becomes a one-line placeholder naming a file
// that holds the whole result. Every later request carries the identical
// placeholder, so the cache is rebuilt once.

// idleClearBy names the proxy's idle clear in cuts and stored events.
const idleClearBy = "proxy-clear-idle"

// idleLifetime is the cache lifetime the pause of c is measured against,
// or 0 when c is not to be cleared: the clear is off, the conversation has
// no answer relayed yet, the format documents no lifetime, or the pause
// is not longer than it. idle is the pause.
func (p *Proxy) idleLifetime(c *call) (lifetime, idle time.Duration) {
	if p.opts.NoClearWhenIdle || c.conv.answered.IsZero() {
		return 0, 0
	}
	idle = p.now().Sub(c.conv.answered)
	lifetime = p.opts.ClearWhenIdle
	if lifetime == 0 {
		if idle <= shortestCacheLifetime {
			return 0, idle // no format's cache has expired: the body is not read
		}
		lifetime = c.format.cacheLifetime(c.in)
	}
	if lifetime <= 0 || idle <= lifetime {
		return 0, idle
	}
	return lifetime, idle
}

// clearIdle clears the old results of c when its conversation was idle
// longer than the upstream's cache lives, updating their decisions. A
// result whose placeholder (longer than the engine's, as it names the
// file) would be no shorter than what it shows stays. Called with the
// conversation locked, after every result of the history has its
// decision.
func (p *Proxy) clearIdle(ctx context.Context, c *call) error {
	lifetime, idle := p.idleLifetime(c)
	if lifetime == 0 || c.continued {
		return nil // a continued request's earlier results are the upstream's
	}
	chosen, err := idleChoice(ctx, c.hist, lifetime, idle)
	if err != nil {
		// The clear is a saving, not a duty: the request goes on as
		// decided.
		p.logf("harness proxy: %s: no idle clear: %v", c.conv.id, err)
		return nil
	}
	turn, round := len(c.hist.Turns), 1
	if turn > 0 {
		round = len(c.hist.Turns[turn-1].Rounds) + 1
	}
	var records []store.Decision
	for _, w := range chosen {
		d := w.dec
		if d.cleared != nil {
			continue // the same result twice in the history
		}
		before := len(d.out)
		if d.out == nil {
			before = w.Content.End - w.Content.Start
		}
		if len(w.Encode(idlePlaceholder(d.res, w.Args, 0, ""))) >= before {
			continue // the placeholder would be no shorter than what is shown
		}
		text, path, err := p.placeholder(ctx, c.conv.id, d.res, w.Args)
		if err != nil {
			// The whole result has nowhere to go: it stays as it is.
			p.logf("harness proxy: %s: not clearing the result of call %s after %s idle: %v", c.conv.id, d.res.CallID, idle.Round(time.Second), err)
			continue
		}
		out := w.Encode(text)
		if len(out) >= before {
			continue
		}
		d.out = out
		d.cleared = clearedCopy(d.res, text, path)
		c.idleCleared++
		c.idleBytes += int64(before - len(d.out))
		p.observeClear(c.conv.id, turn, round, d, text, idle)
		records = append(records, p.clearRecord(turn, round, d))
	}
	p.storeClears(ctx, c.conv.id, records)
	c.idle = idle
	return nil
}

// idleChoice returns the results of h that the engine's idle clear takes
// at a request after idle, for a cache that lives lifetime: it runs
// policy.CompactPolicy with ClearWhenIdle (and nothing else: no window,
// so it never compacts for size; no cost trigger; no recall tool, which
// the client does not offer) over a view of h's decided results, and
// reads which results the view cleared. Results already cleared show as
// their placeholders; results that are not text are left out.
func idleChoice(ctx context.Context, h *history, lifetime, idle time.Duration) ([]*wireResult, error) {
	conv := harness.NewConversation("")
	byRes := map[*harness.ToolResult][]*wireResult{}
	for ti, t := range h.Turns {
		turn := t.harnessTurn(ti + 1)
		for ri, r := range t.Rounds {
			round := &harness.Round{Index: ri + 1, Assistant: r.Assistant}
			for _, w := range r.Results {
				if w.dec == nil || w.dec.opaque {
					continue
				}
				res := w.dec.shown()
				if byRes[res] == nil {
					round.Results = append(round.Results, res)
				}
				byRes[res] = append(byRes[res], w)
			}
			turn.Rounds = append(turn.Rounds, round)
		}
		conv.Turns = append(conv.Turns, turn)
	}
	if len(conv.Turns) == 0 {
		return nil, nil
	}
	v := harness.BuildView(conv, conv.Turns[len(conv.Turns)-1], "", nil, false)
	v.Idle = idle
	for i, o := range v.Origins {
		// A result cleared before is cleared in this view too, as the
		// engine's view reproduces an earlier clear.
		if ws := byRes[o.Result]; o.Result != nil && len(ws) > 0 && ws[0].dec.cleared != nil {
			v.Origins[i].Cuts = append(v.Origins[i].Cuts, o.Result.Cuts[len(o.Result.Cuts)-1])
		}
	}
	// The clear's choice reads no token count (an idle clear takes every
	// clearable result, however few tokens), so a byte estimate stands in
	// for the tokenizer; an empty window table keeps the policy from ever
	// compacting for size.
	pol := policy.CompactPolicy{ClearWhenIdle: lifetime, NoClearOld: true, NoRecall: true, Unbounded: true,
		Windows: catalog.Windows{}, Counter: tokens.CounterFunc(func(s string) int { return (len(s) + 3) / 4 })}
	if err := pol.ApplyView(ctx, v); err != nil {
		return nil, fmt.Errorf("proxy: idle clear: %w", err)
	}
	var out []*wireResult
	for i, o := range v.Origins {
		if o.Result != nil && o.Result.CallID == v.Messages[i].ToolCallID && viewCleared(o.Cuts) {
			for _, w := range byRes[o.Result] {
				if w.dec.cleared == nil {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

// viewCleared reports whether cuts hold a clear.
func viewCleared(cuts []harness.Cut) bool {
	for _, c := range cuts {
		if c.Kind == harness.CutCleared {
			return true
		}
	}
	return false
}

// placeholder writes the one line that stands in for res once cleared,
// and returns it with the file that holds the whole result: the ceiling's
// spill file when res was spilled, the turn budget's when it was trimmed,
// else a new spill file of its own.
func (p *Proxy) placeholder(ctx context.Context, convID string, res *harness.ToolResult, args []byte) (string, string, error) {
	full := res.FullText()
	path := wholeFile(res)
	if locator.IsCall(path) {
		saved, err := p.spill.Save(ctx, spill.Entry{Conversation: convID, CallID: res.CallID, Tool: res.Tool, Ext: "txt"}, strings.NewReader(full))
		if err != nil {
			return "", "", err
		}
		path = saved.Locator
	}
	return idlePlaceholder(res, args, len(full), path), path, nil
}

// wholeFile is the newest file a cut of res names as holding it whole (a
// spill, or a trim that spilled), or its call's locator when none does.
func wholeFile(res *harness.ToolResult) string {
	for i := len(res.Cuts) - 1; i >= 0; i-- {
		c := res.Cuts[i]
		if (c.Kind == harness.CutSpilled || c.Kind == harness.CutTrimmed) && c.Locator != "" && !locator.IsCall(c.Locator) {
			return c.Locator
		}
	}
	return locator.Call(res.CallID)
}

// idlePlaceholder is the placeholder of res, made by a call with args,
// size bytes whole, kept in the file at path. It depends on nothing else,
// so it reads the same in every request; it is one line.
func idlePlaceholder(res *harness.ToolResult, args []byte, size int, path string) string {
	what := res.Tool
	if len(args) > 0 {
		a := canonjson.OrRaw(args)
		if utf8.RuneCountInString(a) > 80 {
			a = string([]rune(a)[:80]) + "…"
		}
		what += " " + a
	}
	kind := "result"
	if res.IsError {
		kind = "error result"
	}
	line := fmt.Sprintf("[harness proxy: cleared after an idle pause, when the prompt cache had expired: the %s of %s (call %s, %d bytes). The whole result is in %s. %s]",
		kind, what, res.CallID, size, path, spillHint)
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(line)
}

// clearedCopy is res as the idle clear leaves it: the placeholder as its
// model copy, and a cut that says so (a guard's StillShown then tells it
// the model no longer sees the result, so nothing points at it).
func clearedCopy(res *harness.ToolResult, text, path string) *harness.ToolResult {
	c := *res
	c.Model = []harness.Part{harness.TextPart(text)}
	c.Cuts = append(append([]harness.Cut(nil), res.Cuts...), harness.Cut{Kind: harness.CutCleared, By: idleClearBy,
		BytesIn: len(res.ModelText()), BytesOut: len(text), Locator: path})
	return &c
}

// storeClears records the clears of conversation convID as typed
// decisions, which a restarted proxy reads back (restoreClears) so that
// it sends the same bytes. A failed write is logged: the clear was made
// and the request goes on; a restart would then send the results whole.
func (p *Proxy) storeClears(ctx context.Context, convID string, ds []store.Decision) {
	if p.opts.Store == nil || len(ds) == 0 {
		return
	}
	if err := p.opts.Store.AddDecisions(ctx, convID, ds); err != nil {
		p.logf("harness proxy: %s: recording %d idle clear(s): %v", convID, len(ds), err)
	}
}

// clearRecord is the typed decision of a clear of d, at the request of
// turn and round.
func (p *Proxy) clearRecord(turn, round int, d *decision) store.Decision {
	res, cut := d.res, d.cleared.Cuts[len(d.cleared.Cuts)-1]
	return store.Decision{Turn: turn, Round: round, CallID: res.CallID, Tool: res.Tool, ContentSHA256: hex.EncodeToString(d.hash[:]),
		By: idleClearBy, Text: d.cleared.ModelText(), Locator: cut.Locator, BytesIn: cut.BytesIn, BytesOut: cut.BytesOut, Time: p.now()}
}

// observeClear reports a clear as a policy event about the result (the
// transcript keeps every result as the client sent it): the store
// indexes it as a view cut of the request, which "harness log show"
// prints.
func (p *Proxy) observeClear(convID string, turn, round int, d *decision, text string, idle time.Duration) {
	if p.opts.Store == nil {
		return
	}
	e := clearEvent(convID, turn, round, d, text)
	e.Time = p.now()
	e.Detail = fmt.Sprintf("cleared the result of call %s after %s idle (the prompt cache had expired)", d.res.CallID, idle.Round(time.Second))
	e.Data["idle_seconds"] = idle.Seconds()
	p.opts.Store.Observe(e)
}

// inheritClears records in a new fork the clears its parent made of the
// shared results ds (parent names it), as events and typed decisions, so
// a restarted proxy sends the fork's prefix with the placeholders too
// (restoreClears).
func (p *Proxy) inheritClears(ctx context.Context, fork, parent string, turn, round int, ds []*decision) {
	if p.opts.Store == nil {
		return
	}
	var records []store.Decision
	for _, d := range ds {
		e := clearEvent(fork, turn, round, d, d.cleared.ModelText())
		e.Time = p.now()
		e.Detail = fmt.Sprintf("the result of call %s as conversation %s cleared it before this fork", d.res.CallID, parent)
		p.opts.Store.Observe(e)
		records = append(records, p.clearRecord(turn, round, d))
	}
	p.storeClears(ctx, fork, records)
}

// clearEvent is the policy event of a clear of decision d to text.
func clearEvent(convID string, turn, round int, d *decision, text string) harness.Event {
	res, cut := d.res, d.cleared.Cuts[len(d.cleared.Cuts)-1]
	return harness.Event{Kind: harness.EventPolicy, Conversation: convID, Turn: turn, Round: round,
		Policy: idleClearBy, Call: &harness.ToolCall{ID: res.CallID, Name: res.Tool},
		Result: &harness.ResultInfo{Tool: res.Tool, BytesIn: res.PayloadSize(), BytesShown: len(text), IsError: res.IsError, Cuts: []harness.Cut{cut}},
		Data: map[string]any{"marker": text, "size_in": cut.BytesIn, "size_out": cut.BytesOut, "unit": "bytes",
			metaHash: hex.EncodeToString(d.hash[:])}}
}

// restoreClears gives the decisions restored from the store the clears
// an earlier proxy recorded (storeClears): the same placeholder, so the
// same bytes. A clear with no typed decision was stored by a proxy that
// kept its clears only as policy events (observeClear): those are read
// too. Called with c.mu held, after the decisions are restored.
func (c *conversation) restoreClears(ctx context.Context, st store.Store) error {
	records, err := st.Decisions(ctx, c.id)
	if err != nil {
		return err
	}
	old, err := clearsFromEvents(ctx, st, c.id)
	if err != nil {
		return err
	}
	typed := map[[2]string]bool{}
	for _, r := range records {
		typed[[2]string{r.CallID, r.ContentSHA256}] = true
	}
	for _, r := range old {
		if !typed[[2]string{r.CallID, r.ContentSHA256}] {
			records = append(records, r)
		}
	}
	for _, r := range records {
		if r.By != idleClearBy || r.Text == "" {
			continue
		}
		for _, d := range c.decided[r.CallID] {
			if d.cleared == nil && hex.EncodeToString(d.hash[:]) == r.ContentSHA256 {
				d.out, d.cleared, d.clearClaimed = encodeString(r.Text), clearedCopy(d.res, r.Text, r.Locator), true
			}
		}
	}
	return nil
}

// clearsFromEvents reads the clears of conversation id from the policy
// events a proxy recorded them as before stores kept them as decisions.
func clearsFromEvents(ctx context.Context, st store.Store, id string) ([]store.Decision, error) {
	events, err := st.Events(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	var out []store.Decision
	for _, e := range events {
		if e.Kind != harness.EventPolicy || e.Policy != idleClearBy || e.Call == nil || e.Result == nil || len(e.Result.Cuts) == 0 {
			continue
		}
		text, _ := e.Data["marker"].(string)
		hash, _ := e.Data[metaHash].(string)
		out = append(out, store.Decision{Turn: e.Turn, Round: e.Round, CallID: e.Call.ID, Tool: e.Call.Name, ContentSHA256: hash,
			By: idleClearBy, Text: text, Locator: e.Result.Cuts[0].Locator, Time: e.Time})
	}
	return out, nil
}

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
	if lifetime == 0 {
		return nil
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
	}
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
		Windows: tokens.Windows{}, Counter: tokens.CounterFunc(func(s string) int { return (len(s) + 3) / 4 })}
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

// observeClear records a clear in the store as a policy event about the
// result (the transcript keeps every result as the client sent it): the
// store indexes it as a view cut of the request, and a restarted proxy
// reads the placeholder back from it (restoreClears), so it sends the
// same bytes.
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

// observeInheritedClear records in a new fork a clear its parent made
// of a shared result (parent names it), so a restarted proxy sends the
// fork's prefix with the placeholder too (restoreClears).
func (p *Proxy) observeInheritedClear(fork, parent string, turn, round int, d *decision) {
	if p.opts.Store == nil {
		return
	}
	e := clearEvent(fork, turn, round, d, d.cleared.ModelText())
	e.Time = p.now()
	e.Detail = fmt.Sprintf("the result of call %s as conversation %s cleared it before this fork", d.res.CallID, parent)
	p.opts.Store.Observe(e)
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
// an earlier proxy recorded (observeClear): the same placeholder, so the
// same bytes. Called with c.mu held, after the decisions are restored.
func (c *conversation) restoreClears(ctx context.Context, st store.Store) error {
	events, err := st.Events(ctx, c.id, 0)
	if err != nil {
		return err
	}
	for _, e := range events {
		if e.Kind != harness.EventPolicy || e.Policy != idleClearBy || e.Call == nil || e.Result == nil || len(e.Result.Cuts) == 0 {
			continue
		}
		text, _ := e.Data["marker"].(string)
		hash, _ := e.Data[metaHash].(string)
		for _, d := range c.decided[e.Call.ID] {
			if d.cleared == nil && text != "" && hex.EncodeToString(d.hash[:]) == hash {
				d.out, d.cleared, d.clearClaimed = encodeString(text), clearedCopy(d.res, text, e.Result.Cuts[0].Locator), true
			}
		}
	}
	return nil
}

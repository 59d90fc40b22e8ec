package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentharness/harness"
)

// recordHistory queues for the store what the request's history adds:
// new turns, every round whose results the history now carries (with the
// decided results and the usage the upstream reported for it), the end of
// every turn a later turn follows, and the request itself (system prompt
// and tool schemas) for the round it will produce. Called with the
// conversation locked.
func (p *Proxy) recordHistory(c *call) {
	cv := c.conv
	turns := c.hist.Turns
	if len(turns) == 0 {
		turns = []*histTurn{{}}
	}
	for ti, t := range turns {
		idx := ti + 1
		var mt *harness.Turn
		if idx <= len(cv.mirror) {
			mt = cv.mirror[ti]
		} else {
			mt = t.harnessTurn(idx)
			mt.Started = p.now()
			p.beginTurn(cv, mt)
		}
		if mt.Outcome != "" {
			if len(t.Rounds) > len(mt.Rounds) && !c.req.side() {
				// The client went on with a turn that has ended: it is
				// not reopened, so the rounds it adds are not recorded.
				// A side request's history carries the main
				// conversation's rounds of a turn its answer ended: no
				// warning.
				p.logf("harness proxy: warning: conversation %s: turn %d has ended (%s) with %d round(s); the request carries %d, not recorded",
					cv.id, idx, mt.Outcome, len(mt.Rounds), len(t.Rounds))
			}
			continue
		}
		for ri, r := range t.Rounds {
			if ri < len(mt.Rounds) {
				continue
			}
			key := roundKey{idx, ri + 1}
			round := &harness.Round{Index: ri + 1, Assistant: r.Assistant, Usage: cv.usage[key], Answered: cv.times[key],
				Stats: harness.RequestStats{EvidenceChars: cv.evidence[key]}}
			for _, res := range r.Results {
				if res.dec != nil {
					round.Results = append(round.Results, res.dec.res)
				}
			}
			p.addRound(cv, mt, round)
		}
		if idx < len(turns) {
			p.endTurn(cv, mt)
		}
	}
	last := turns[len(turns)-1]
	c.key = roundKey{len(turns), len(last.Rounds) + 1}
	cv.evidence[c.key] = evidenceChars(c.hist)
	mt := cv.mirror[len(turns)-1]
	if mt.Outcome != "" || len(mt.Rounds) >= c.key.round {
		return // answered already (a client retrying): nothing new to record
	}
	if cv.inflight[c.key] == nil {
		// A retry of a request still in flight shares its channel, which
		// the first to finish closes.
		cv.inflight[c.key] = make(chan struct{})
	}
	hreq := &harness.Request{Turn: c.key.turn, Round: c.key.round}
	hreq.System, hreq.Tools = cv.offered(c.req)
	hreq.Tools = c.deferred.sent(hreq.Tools)
	p.rec.add(cv.id, op{kind: opRequest, turn: *mt, req: hreq})
}

// addRound queues a round of turn mt.
func (p *Proxy) addRound(cv *conversation, mt *harness.Turn, round *harness.Round) {
	if p.replicas.log != nil {
		cv.note(mirrorAdd{Turn: mt.Index, Round: round.Index, Sig: roundSig(mark{calls: round.Assistant.ToolCalls, stored: round.Results}),
			At: round.Answered, Usage: round.Usage})
	}
	mt.Rounds = append(mt.Rounds, round)
	mt.Usage = mt.Usage.Add(round.Usage)
	p.rec.add(cv.id, op{kind: opRound, turn: *mt, round: round})
}

// endTurn queues the end of turn mt: answered, since the client went on.
func (p *Proxy) endTurn(cv *conversation, mt *harness.Turn) {
	p.closeTurn(cv, mt, harness.Answered, p.now())
}

// finish closes a model call: it records the usage the upstream reported
// for the round, and an answer without tool calls as the turn's last
// round.
func (p *Proxy) finish(c *call, rep *reply, status int) {
	ok := rep != nil && status >= 200 && status < 300
	tenant := ""
	if c.conv != nil {
		tenant = p.tenantIn(c.conv.id)
	}
	p.countIn(tenant, func(s *Stats) {
		s.Requests++
		s.BytesIn += int64(len(c.in))
		s.BytesOut += int64(c.outLen())
		s.ResultsDecided += int64(c.decided)
		s.ResultsCut += int64(c.cut)
		s.ResultsReused += int64(c.reused)
		if c.cacheBreak {
			s.CacheBreaks++
		}
		if c.idleCleared > 0 {
			s.IdleClears++
			s.IdleClearedResults += int64(c.idleCleared)
			s.IdleClearedBytes += c.idleBytes
		}
		if status >= 400 || status == 0 {
			s.UpstreamErrors++
		}
		var used Tokens
		if ok {
			used = Tokens{Input: int64(rep.Usage.Input), Cached: int64(rep.Usage.Cached), Output: int64(rep.Usage.Output)}
			s.Upstream.add(used)
		}
		if c.conv != nil {
			s.countConversation(c, used)
		}
	})
	if c.req != nil {
		c.awaitCounts() // the saving then needs no tokenizer for them
		p.savings.add(c, rep, ok, p.now())
	}
	cv := c.conv
	if cv == nil {
		return
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if ch := cv.inflight[c.key]; ch != nil {
		delete(cv.inflight, c.key)
		defer close(ch)
	}
	if ok {
		cv.answered = p.now() // a pause starts
		p.linkAnswer(cv, rep.ID, c.items, rep)
	}
	if ok && c.key.turn > 0 {
		cv.times[c.key] = cv.answered
	}
	if !ok || c.key.turn == 0 {
		return
	}
	cv.usage[c.key] = rep.Usage
	if !rep.Seen || len(rep.Calls) > 0 || c.key.turn > len(cv.mirror) {
		return // a round with calls is recorded when its results arrive
	}
	mt := cv.mirror[c.key.turn-1]
	if mt.Outcome != "" || len(mt.Rounds) != c.key.round-1 {
		return
	}
	round := &harness.Round{Index: c.key.round, Usage: rep.Usage, Answered: cv.answered, Assistant: harness.Message{Role: harness.RoleAssistant},
		Stats: harness.RequestStats{EvidenceChars: cv.evidence[c.key]}}
	if rep.Text != "" {
		round.Assistant.Parts = []harness.Part{harness.TextPart(rep.Text)}
	}
	p.addRound(cv, mt, round)
	p.endTurn(cv, mt)
}

// offered decodes the request's system prompt and tool list for the
// store, once per distinct pair. Called with the conversation locked.
func (cv *conversation) offered(req *request) (string, []harness.ToolSpec) {
	h := sha256.New()
	h.Write(req.System)
	h.Write([]byte{0})
	h.Write(req.Tools)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	if key == cv.offeredKey {
		return cv.system, cv.tools
	}
	cv.offeredKey = key
	cv.system = systemText(req.System)
	cv.tools = toolSpecs(req.Tools)
	return cv.system, cv.tools
}

// systemText reads a system prompt in any format's shape: a string, an
// array of text blocks, or an object with parts (Gemini's
// systemInstruction).
func systemText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var texts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			texts = append(texts, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				texts = append(texts, t)
			} else if parts, ok := x["parts"]; ok {
				walk(parts)
			}
		}
	}
	walk(v)
	return textOf(texts)
}

// toolSpecs reads a tool list in any format's shape: Anthropic's
// {name, description, input_schema}, the Responses API's {type, name,
// parameters}, Chat Completions' {type, function: {…}} and Gemini's
// {functionDeclarations: […]}.
func toolSpecs(raw json.RawMessage) []harness.ToolSpec {
	if len(raw) == 0 {
		return nil
	}
	type decl struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Parameters  json.RawMessage `json:"parameters"`
		// ParametersJSONSchema is Gemini's JSON Schema form (Gemini
		// CLI's MCP tools).
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	}
	var list []struct {
		decl
		Type      string `json:"type"`
		Function  *decl  `json:"function"`
		Functions []decl `json:"functionDeclarations"`
		// Tools are a Responses namespace's (Codex's MCP servers).
		Tools []decl `json:"tools"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []harness.ToolSpec
	add := func(prefix string, d decl) {
		schema := d.InputSchema
		for _, alt := range []json.RawMessage{d.Parameters, d.ParametersJSONSchema} {
			if len(schema) == 0 {
				schema = alt
			}
		}
		if d.Name != "" {
			out = append(out, harness.ToolSpec{Name: prefix + d.Name, Description: d.Description, InputSchema: schema})
		}
	}
	for _, t := range list {
		switch {
		case t.Function != nil:
			add("", *t.Function)
		case len(t.Functions) > 0:
			for _, d := range t.Functions {
				add("", d)
			}
		case t.Type == "namespace":
			// A call of a member names the namespace: NAMESPACE__tool,
			// as the proxy records it (responses.go).
			for _, d := range t.Tools {
				add(t.Name+"__", d)
			}
		default:
			add("", t.decl)
		}
	}
	return out
}

// evidenceChars counts the characters of tool-result text a request sends
// upstream: every result of its history as the model is shown it (its
// decision's model copy), the figure the engine records as a round's
// RequestStats.EvidenceChars.
func evidenceChars(h *history) int {
	n := 0
	for _, r := range h.Results {
		if r.dec != nil {
			n += r.dec.shownChars()
		}
	}
	return n
}

// shownChars counts the characters of the model copy d is shown as,
// counted once per copy (a history sends every old result again).
func (d *decision) shownChars() int {
	if s := d.shown(); d.charsOf != s {
		d.chars, d.charsOf = utf8.RuneCountInString(s.ModelText()), s
	}
	return d.chars
}

// ResentPolicy names the event that records a tool result a client sent
// again, under the call id of a round the store already holds, with other
// content (a client that rewrites or prunes an old output): a
// harness.EventPolicy event of the conversation, whose Turn, Round and
// Call locate the result, Data["content"] holds the text as the client
// sent it, Data["sent"] the model copy the proxy sent upstream for it,
// and Data["proxy_content_sha256"] and Data["stored_sha256"] the hashes
// of the new and the stored content. The stored round keeps the result
// it was recorded with; harness log show lists the event under its turn.
const ResentPolicy = "proxy-resent"

// recordResent records new decision d of result r as a ResentPolicy event
// when the round r belongs to is already recorded with other content for
// its call id: the round is not recorded again, so what was sent upstream
// would otherwise be nowhere. Called with cv locked.
func (p *Proxy) recordResent(cv *conversation, r *wireResult, d *decision) {
	if r.Turn < 1 || r.Turn > len(cv.mirror) {
		return
	}
	mt := cv.mirror[r.Turn-1]
	if r.Round < 1 || r.Round > len(mt.Rounds) {
		return
	}
	var stored *harness.ToolResult
	for _, res := range mt.Rounds[r.Round-1].Results {
		if res.CallID == r.CallID {
			stored = res
			break
		}
	}
	hash := hex.EncodeToString(d.hash[:])
	if stored == nil || stored.Meta[metaHash] == hash {
		return
	}
	p.logf("harness proxy: conversation %s: call %s of turn %d round %d re-sent with other content (%d bytes); sent as decided now, recorded as a %s event",
		cv.id, r.CallID, r.Turn, r.Round, d.res.PayloadSize(), ResentPolicy)
	if p.opts.Store == nil {
		return
	}
	storedHash, _ := stored.Meta[metaHash].(string)
	sent := d.res.ModelText()
	p.opts.Store.Observe(harness.Event{Kind: harness.EventPolicy, Time: p.now(), Conversation: cv.id, Turn: r.Turn, Round: r.Round,
		Policy: ResentPolicy, Call: &harness.ToolCall{ID: r.CallID, Name: r.Tool},
		Result: &harness.ResultInfo{Tool: r.Tool, BytesIn: d.res.PayloadSize(), BytesShown: len(sent), IsError: d.res.IsError},
		Detail: fmt.Sprintf("call %s re-sent with other content; the round keeps the content it was recorded with", r.CallID),
		Data:   map[string]any{"content": d.res.FullText(), "sent": sent, metaHash: hash, "stored_sha256": storedHash}})
}

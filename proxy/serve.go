package proxy

import (
	"context"
	"encoding/hex"
	"hash/maphash"
	"net/http"
	"strings"
	"time"

	"github.com/agentharness/harness"
)

// call is one model call passing through the proxy.
type call struct {
	format wireFormat
	conv   *conversation
	req    *request
	hist   *history
	key    roundKey
	// in is the client's body, held in buf; what goes upstream is in
	// with edits (sent).
	in  []byte
	buf *bodyBuf
	// Figures of the rewrite.
	decided, reused, cut int
	cacheBreak           bool
	// idleCleared counts the results the idle clear took in this request
	// and idleBytes the bytes that removed; idle is the pause before it
	// when the clear acted.
	idleCleared int
	idleBytes   int64
	idle        time.Duration
	// deferred is what Options.DeferTools did to the tools array, and
	// rule how it told the MCP tools (by the request's client).
	deferred deferred
	rule     mcpRule
	// client names the agent (savings.go); edits are what was replaced
	// in the body, for the savings count.
	client string
	edits  []edit
	// counts are the token counts of the results this call cut, counted
	// while it is upstream and claimed with its answer.
	counts []*tokenCount
	// items are what hist was built from; continued is set when they
	// begin with the history of the answer the request continues
	// (chain.go).
	items     []item
	continued bool
	// keyed is the conversation a request continuing an answer the proxy
	// cannot read it with goes to (chain.go).
	keyed string
}

// sent is the body the call sends upstream.
func (c *call) sent() sentBody { return sentBody{in: c.in, edits: c.edits, buf: c.buf} }

// outLen is the length of the body the call sends upstream.
func (c *call) outLen() int { return c.sent().size() }

// serveModelCall rewrites the tool results of a model call, forwards it,
// relays the answer and records the round.
func (p *Proxy) serveModelCall(w http.ResponseWriter, r *http.Request, f wireFormat) {
	start := time.Now()
	bb, err := p.readBody(w, r)
	if err == nil {
		bb, err = p.decodeBody(w, r, bb)
	}
	if err != nil {
		return
	}
	defer bb.release()
	body := bb.bytes()
	prev := p.previous(body)
	req, err := walkBody(body, f, prev)
	if prev != nil {
		prev.buf.release()
	}
	if err != nil {
		// Not a request this format describes: the upstream judges it.
		p.countIn(p.tenantOf(r), func(s *Stats) { s.Unreadable++ })
		p.logf("harness proxy: %s %s: forwarded unchanged (%v)", r.Method, r.URL.Path, err)
		p.forward(w, r, &call{format: f, in: body, buf: bb}, nil, start)
		return
	}
	req.buf = bb
	if req.Model == "" {
		req.Model = geminiModel(r.URL.Path)
	}
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		req.Stream = true
	}
	req.hash(p.seed)
	p.remember(req, prev)
	c := &call{format: f, req: req, in: body, buf: bb, rule: requestRule(r.Header),
		client: clientName(r.Header.Get("User-Agent"), f)}
	if p.continues(req) {
		// Read once the conversation is held: see chain.go.
		var linked string
		linked, c.keyed = p.chainConversation(r, req.PrevResponse, req.Stored)
		c.conv = p.conversation(linked)
	} else {
		c.items = req.Items
		c.hist = buildHistory(req.Items)
		c.conv = p.conversation(p.tenantConversation(r, conversationID(r, f, req, c.hist)))
	}
	// prepare may move the call to a fork of the conversation: the one
	// it ends on is held.
	defer func() { p.release(c.conv) }()
	if err := p.prepare(r.Context(), c); err != nil {
		proxyError(w, http.StatusServiceUnavailable, "proxy_error", "harness proxy: "+err.Error())
		return
	}
	p.forward(w, r, c, f.newReply(), start)
}

// forward sends c's body upstream and relays the answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, c *call, parse replyParser, start time.Time) {
	prepared := time.Since(start)
	up, err := p.upstreamRequest(r.Context(), r, c.sent())
	var resp *http.Response
	if err == nil {
		resp, err = p.client.Do(up)
	}
	if err != nil {
		p.finish(c, nil, 0)
		p.logUnreachable(callLabel(c), err)
		proxyError(w, http.StatusBadGateway, "upstream_unreachable", "harness proxy: the upstream did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	defer func() {
		// relay aborts the connection (a panic) on an oversized answer;
		// the round is still closed so the next request does not wait.
		if v := recover(); v != nil {
			p.finish(c, nil, resp.StatusCode)
			panic(v)
		}
	}()
	_, rerr := p.relay(w, resp, parse)
	var rep *reply
	if parse != nil && rerr == nil {
		rr := parse.reply()
		rep = &rr
	}
	p.finish(c, rep, resp.StatusCode)
	p.claimAnswered(c)
	p.logRequest(c, resp.StatusCode, rep, prepared)
}

// prepare decides the request's tool results, builds the body sent
// upstream and queues what the history adds to the store. A history that
// diverges from its conversation's moves the call to the fork it belongs
// to first (fork.go).
func (p *Proxy) prepare(ctx context.Context, c *call) error {
	c.conv.mu.Lock()
	defer func() { c.conv.mu.Unlock() }()
	if p.replicas.log == nil {
		if err := c.conv.load(ctx, p.opts.Store, p.rec); err != nil {
			p.logf("harness proxy: loading %s from the store: %v", c.conv.id, err)
		}
	}
	if c.hist == nil {
		p.continueChain(ctx, c)
	}
	p.syncReplicas(ctx, c) // loads the conversation when shared
	if err := c.conv.awaitInflight(ctx, c.hist); err != nil {
		return err
	}
	parent := c.conv
	if err := p.follow(ctx, c); err != nil {
		return err
	}
	if c.conv != parent {
		p.syncReplicas(ctx, c) // a fork another replica may have advanced
	}
	cv := c.conv
	c.deferred = p.deferTools(ctx, c)
	edits, err := p.decideAll(ctx, c)
	if err != nil {
		return err
	}
	c.edits = mergeEdits(edits, c.deferred.edits)
	in := c.req.elemSums
	c.cacheBreak = cv.cacheBreak(in, c.sent().elemSums(p.seed, c.req.Elems, in))
	p.recordHistory(c)
	return nil
}

// decideAll looks up or makes the decision of every tool result in the
// history and returns the edits that apply them, in body order.
func (p *Proxy) decideAll(ctx context.Context, c *call) ([]edit, error) {
	cv := c.conv
	var transcript *harness.Conversation
	fresh := map[*wireResult]bool{}
	for i, r := range c.hist.Results {
		if r.Content.End <= r.Content.Start {
			continue
		}
		content := c.in[r.Content.Start:r.Content.End]
		fast := r.sum
		if fast == 0 {
			fast = maphash.Bytes(p.seed, content) // a parse request.hash did not see
		}
		d, hash := cv.lookup(r.CallID, fast, content)
		if d != nil {
			fillBare(d, r, c.in)
			c.reused++
		} else {
			if transcript == nil {
				transcript = cv.transcript(c.hist)
			}
			var err error
			if d, err = p.decideOne(ctx, c, r, hash, transcript, roundBefore(c.hist.Results[:i], r)); err != nil {
				return nil, err
			}
			d.fast = fast
			p.recordResent(cv, r, d)
			cv.decided[r.CallID] = append(cv.decided[r.CallID], d)
			c.decided++
			fresh[r] = !d.opaque
		}
		r.dec = d
	}
	if err := p.budget.apply(ctx, cv.id, c.hist, fresh); err != nil {
		return nil, err
	}
	if err := p.clearIdle(ctx, c); err != nil {
		return nil, err
	}
	p.claimDecisions(ctx, c)
	var edits []edit
	for _, r := range c.hist.Results {
		if r.dec == nil || r.dec.out == nil || r.Content.End <= r.Content.Start {
			continue // not decided, sent as it came, or not in this body
		}
		if _, ok := fresh[r]; ok {
			c.cut++
		}
		edits = append(edits, edit{Span: r.Content, New: r.dec.out, Tokens: &r.dec.tokens})
	}
	return edits, nil
}

// roundBefore returns the results of r's round among earlier (the
// history's results before r) as decided so far, in body order: a result
// decided now sees its round's earlier calls through RoundResults, as a
// call does under Engine.RunCalls (Collapse folds a repeat of one), since
// the transcript holds only what was decided before this request.
func roundBefore(earlier []*wireResult, r *wireResult) []*harness.ToolResult {
	var out []*harness.ToolResult
	for _, e := range earlier {
		if e.dec != nil && e.Turn == r.Turn && e.Round == r.Round {
			out = append(out, e.dec.shown())
		}
	}
	return out
}

// decideOne decides a result seen for the first time; earlier are the
// decided results of the calls before it in its round.
func (p *Proxy) decideOne(ctx context.Context, c *call, r *wireResult, hash [32]byte, transcript *harness.Conversation, earlier []*harness.ToolResult) (*decision, error) {
	d := &decision{hash: hash}
	text, ok := r.Decode(c.in)
	if !ok {
		// Not text (an image block): shown as sent, and stored as text of
		// what could be read.
		d.res = &harness.ToolResult{CallID: r.CallID, Tool: r.Tool, IsError: r.IsError, Parts: []harness.Part{harness.TextPart(text)}}
		d.res.Bytes = d.res.PayloadSize()
		d.opaque, d.plain = true, true
	} else {
		in := &admission{Call: harness.ToolCall{ID: r.CallID, Name: r.Tool, Args: r.Args}, Text: text, IsError: r.IsError,
			Info: harness.CallInfo{Conversation: c.conv.id, Turn: r.Turn, Round: r.Round, Spec: harness.ToolSpec{Name: r.Tool},
				Workspace: p.workspaceOf(ctx), Transcript: transcript, Message: r.Message}.WithRoundResults(earlier...)}
		root := p.spillRootOf(ctx)
		in.Page = p.ownPage(c.conv.id, spillPage(r.Args, root), root)
		res, err := p.decide(ctx, in)
		if err != nil {
			return nil, err
		}
		d.res = res
		d.plain = res.Structured == nil && len(res.Parts) == 1 && res.Parts[0].Type == harness.PartText && res.Parts[0].Text == text
		if note := c.deferred.schemaNote(r, text); note != "" {
			// The model called a stub with arguments that do not fit:
			// the full schema is part of the result's model copy from
			// now on (stored, so a restarted proxy sends it too).
			res.Model = []harness.Part{harness.TextPart(res.ModelText() + note)}
			d.out = r.Encode(res.ModelText())
		}
		if len(res.Cuts) > 0 {
			d.out = r.Encode(res.ModelText())
		}
	}
	if d.res.Meta == nil {
		d.res.Meta = map[string]any{}
	}
	d.res.Meta[metaHash] = hex.EncodeToString(hash[:])
	return d, nil
}

// transcript is the conversation as decided so far, for guards that look
// at earlier results (Collapse): every round of the history with the
// results already decided.
func (cv *conversation) transcript(h *history) *harness.Conversation {
	conv := harness.NewConversation(cv.id)
	// One allocation each for the turns, the rounds and the results.
	nRounds := 0
	for _, t := range h.Turns {
		nRounds += len(t.Rounds)
	}
	turns := make([]harness.Turn, len(h.Turns))
	rounds := make([]harness.Round, 0, nRounds)
	ptrs := make([]*harness.Round, 0, nRounds)
	results := make([]*harness.ToolResult, 0, len(h.Results))
	if len(h.Turns) > 0 {
		conv.Turns = make([]*harness.Turn, len(h.Turns))
	}
	for ti, t := range h.Turns {
		turns[ti] = *t.harnessTurn(ti + 1)
		turn := &turns[ti]
		conv.Turns[ti] = turn
		from := len(ptrs)
		for ri, r := range t.Rounds {
			at := len(results)
			for _, res := range r.Results {
				if ds := cv.decided[res.CallID]; len(ds) > 0 {
					results = append(results, ds[0].shown())
				}
			}
			round := harness.Round{Index: ri + 1, Assistant: r.Assistant}
			if len(results) > at {
				round.Results = results[at:len(results):len(results)]
			}
			rounds = append(rounds, round)
			ptrs = append(ptrs, &rounds[len(rounds)-1])
		}
		if len(ptrs) > from {
			turn.Rounds = ptrs[from:len(ptrs):len(ptrs)]
		}
	}
	return conv
}

// recentParses bounds the parses kept for reuse (one per conversation in
// flight is what matters; a few more cover clients that interleave).
const recentParses = 16

// previous returns the kept parse whose body this one extends, or nil;
// the caller releases its body's buffer (prev.buf) once parsed.
func (p *Proxy) previous(body []byte) *request {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.recent) - 1; i >= 0; i-- {
		if p.recent[i].sharesPrefix(body) {
			p.recent[i].buf.hold()
			return p.recent[i]
		}
	}
	return nil
}

// remember keeps req's parse (its items are never changed; a request
// annotates its own wireResults, see buildHistory) for the next request
// of the conversation, replacing the parse it extended (prev, the parse
// it was read with, or nil).
func (p *Proxy) remember(req, prev *request) {
	if req.histStart == 0 || len(req.Elems) <= reuseTail {
		return
	}
	kept := *req
	kept.buf.hold()
	var dropped []*request
	p.mu.Lock()
	for i, r := range p.recent {
		// The parse req reused shares its prefix (walkBody compared it).
		if (r == prev && req.Reused > 0) || r.sharesPrefix(req.body) {
			dropped = append(dropped, r)
			p.recent = append(p.recent[:i], p.recent[i+1:]...)
			break
		}
	}
	p.recent = append(p.recent, &kept)
	if len(p.recent) > recentParses {
		dropped = append(dropped, p.recent[0])
		p.recent = p.recent[1:]
	}
	p.mu.Unlock()
	for _, r := range dropped {
		r.buf.release()
	}
}

package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// metaHash is the ToolResult.Meta key holding the SHA-256 of the result's
// content as the client sent it: with the call id, the key of the
// decision, so a restarted proxy finds its decisions in the store.
const metaHash = "proxy_content_sha256"

// conversation is the proxy's state of one conversation: the decisions
// made so far, what has been queued for the store, and the previous
// request's element hashes for the cache-break check.
type conversation struct {
	id string
	// refs counts the requests using it and used orders it for eviction
	// (both under the proxy's lock).
	refs, used int64

	mu      sync.Mutex
	loaded  bool
	decided map[string][]*decision // by call id
	// mirror holds the turns and rounds queued for the store.
	mirror []*harness.Turn
	usage  map[roundKey]harness.Usage
	// times holds when each round's answer was relayed, for the round's
	// Answered (a round with calls is recorded when its results arrive).
	times    map[roundKey]time.Time
	inflight map[roundKey]chan struct{}
	// evidence holds the characters of tool-result text each request
	// sent, for its round's RequestStats (see record.go).
	evidence map[roundKey]int
	// answered is when the proxy last finished relaying an answer of
	// the conversation (zero: none since it was taken into memory), on
	// the proxy's clock: the start of a pause (see idle.go).
	answered time.Time
	// prevIn and prevOut hash each history element of the previous
	// request as received and as sent.
	prevIn, prevOut []uint64
	// system and tools cache the decoded system prompt and tool list by
	// the hash of their bytes (offeredKey).
	offeredKey [32]byte
	system     string
	tools      []harness.ToolSpec
	// claimSeq is the last claim-log entry read and started the rounds
	// other replicas began (replica.go).
	claimSeq int64
	// alternates is set once another replica has served one of the
	// conversation's requests: its answers' claims are then written
	// before their responses end (claimAnswered).
	alternates bool
	started    map[roundKey]bool
	// maxStarted is the latest round whose start the log holds, and
	// pendingStarts the starts this replica could not claim, with their
	// times (replica_outage.go).
	maxStarted    roundKey
	pendingStarts map[roundKey]time.Time
	// delta is what this replica added to the mirror since its last
	// mirror claim, from shape deltaFrom; foreign holds other replicas'
	// mirror claims not applied yet, in log order, and marks the marks
	// read (replica_mirror.go).
	delta     []mirrorAdd
	deltaFrom mirrorShape
	foreign   []foreignClaim
	marks     map[string]bool
	// chain is what a request continuing the last Responses answer
	// is read with (chain.go).
	chain chain
}

type roundKey struct{ turn, round int }

// decision is a tool result's model copy, decided once.
type decision struct {
	// hash is the SHA-256 of the content bytes (stored, so a restarted
	// proxy finds the decision); fast is their maphash under the proxy's
	// seed, which is what every later lookup compares.
	hash [32]byte
	fast uint64
	res  *harness.ToolResult
	// out replaces the content's bytes; nil sends them as they came.
	out []byte
	// opaque marks a result that is not text (an image): sent as it came,
	// whatever the budget.
	opaque bool
	// cleared is the result as the idle clear left it (nil until then):
	// res with the placeholder as its model copy and the clear's cut. res
	// itself is never changed, as the store may still be writing it.
	cleared *harness.ToolResult
	// claimed and clearClaimed are set once the decision and its clear
	// are in the claim log, or come from the store (replica.go).
	claimed, clearClaimed bool
	// unchanged marks a decision sent as the client sent the result
	// because the claim log did not answer (replica.go).
	unchanged bool
	// chars counts the characters of charsOf's model copy (see
	// shownChars).
	chars   int
	charsOf *harness.ToolResult
	// tokens counts the tokens of the content as the client sent it (0:
	// not counted yet). The replica that cuts a result counts it off the
	// request's path, while the request is upstream, and claims the count
	// with the answer (replica_tokens.go), so the savings of every later
	// request that reuses the cut, on any replica, need no tokenizer
	// (savings.saved). Read and written atomically, written with the
	// conversation locked: the savings goroutine reads it unlocked.
	tokens int64
	// plain marks a result this replica decided whose content is its
	// text as the request carries it (one text part): its claim leaves
	// the content out. bare marks res as read from a claim without its
	// content (replica_bare.go), until a request brings it.
	plain, bare bool
}

// shown is the result as the model is now shown it: cleared, or res.
func (d *decision) shown() *harness.ToolResult {
	if d.cleared != nil {
		return d.cleared
	}
	return d.res
}

// conversationID names a request's conversation: the client's header, the
// format's own key (prompt_cache_key), or a hash of the model, the first
// user message and what names the session. What names the session is the
// client's session id when the request carries one (Claude Code's in the
// body, opencode's X-Session-Id header), with the first message's words
// alone; for a format whose clients open a session
// with a context message naming it (Gemini CLI's), that message's lasting
// lines (sessionLines) with the words; the system prompt with the whole
// first message otherwise. A client that names its session re-makes what
// is not kept when the session is resumed in another process: Claude Code
// 2.1.197 dates its first message anew (Gemini CLI 0.61.0 too, whose key
// keeps the date: see sessionLines), Claude Code
// states its model's context window in one process's system prompt and
// not the next's, Gemini CLI lists its skills in another order, opencode
// 1.18.33 dates its system prompt; a key on
// those would make the resumed requests a second conversation that copies
// the first one's turns (TestProxyResume).
func conversationID(r *http.Request, f wireFormat, req *request, h *history) string {
	if h := strings.TrimSpace(r.Header.Get(ConversationHeader)); h != "" {
		return sanitizeID(h)
	}
	sum := sha256.New()
	part := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		sum.Write(n[:])
		sum.Write([]byte(s))
	}
	part(f.name())
	_, contextNames := f.(sessionContextFormat)
	session := req.Session
	if session == "" {
		session = strings.TrimSpace(r.Header.Get(sessionHeader))
	}
	if req.Key != "" {
		part("key")
		part(req.Key)
		return "px-" + hex.EncodeToString(sum.Sum(nil))[:20]
	}
	part(req.Model)
	switch {
	case session != "":
		part("session")
		part(session)
		part(h.firstText(false))
	case contextNames && h.first != nil && len(h.first.Pieces) > 0:
		part("context")
		part(h.firstText(true))
	default:
		for _, s := range req.seed() {
			part(string(s))
		}
		part(h.firstUser())
	}
	return "px-" + hex.EncodeToString(sum.Sum(nil))[:20]
}

// firstUser is the text of the first user item with any ("" when none).
func (h *history) firstUser() string {
	if h.first == nil {
		return ""
	}
	return h.first.Text
}

// firstText is the first user message as it keys the conversation: the
// user's words, with the lasting lines of each context message when
// withContext (else none of them).
func (h *history) firstText(withContext bool) string {
	if h.first == nil {
		return ""
	}
	if len(h.first.Pieces) == 0 {
		return h.first.Text
	}
	var b strings.Builder
	for _, p := range h.first.Pieces {
		switch {
		case !p.Context:
			b.WriteString(p.Text)
		case withContext:
			b.WriteString(sessionLines(p.Text))
		default:
			continue
		}
		b.WriteByte(0)
	}
	return b.String()
}

// sessionLines returns the lines of a session context message that name
// the session: up to its directory listing (Gemini CLI 0.61.0's
// <session_context> ends with the workspace's files, which the session
// itself changes). The date, the system, the project's folder and the
// workspace stay. The date stays because nothing else tells two sessions
// in one workspace that open with the same prompt apart: two such
// sessions on one day share a key, and the second is stored as a fork of
// the first once its history diverges (fork.go); on different days they
// are two conversations from the start. A session resumed on another day
// is a new conversation, which loses nothing.
func sessionLines(s string) string {
	var keep []string
	for line := range strings.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(line), "- **Directory Structure:**") {
			break
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "")
}

// sessionHeader carries a client's own session id: opencode 1.18.33 sends
// it (with X-Session-Affinity, the same id) on every model call.
const sessionHeader = "X-Session-Id"

// sessionContextFormat is a format whose clients open a session with a
// context message naming it (see conversationID).
type sessionContextFormat interface {
	wireFormat
	sessionContext()
}

// sanitizeID keeps an explicit conversation id printable and short.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, c := range s {
		if b.Len() >= 128 {
			break
		}
		if c > 0x20 && c < 0x7f {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// conversation returns the state of id, creating it.
// It is held until release.
func (p *Proxy) conversation(id string) *conversation {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tick++
	c := p.convs[id]
	if c == nil {
		c = &conversation{id: id, decided: map[string][]*decision{}, usage: map[roundKey]harness.Usage{}, times: map[roundKey]time.Time{}, inflight: map[roundKey]chan struct{}{},
			started: map[roundKey]bool{}, pendingStarts: map[roundKey]time.Time{}, evidence: map[roundKey]int{}, marks: map[string]bool{}}
		p.convs[id] = c
		p.stats.Conversations++
		if t := p.tenantIn(id); t != "" {
			p.stats.tenant(t).Conversations++
		}
	}
	c.refs++
	c.used = p.tick
	p.evict()
	return c
}

// release ends a request's hold on c.
func (p *Proxy) release(c *conversation) {
	p.mu.Lock()
	c.refs--
	p.mu.Unlock()
}

// maxConversations bounds the conversations kept in memory when a store
// holds them: the least recently used idle one is forgotten and reloaded
// from the store (decisions and all) when it is seen again. Without a
// store nothing is forgotten, since a forgotten decision would be made
// again with a new spill path and break the prompt cache.
const maxConversations = 256

// evict forgets the least recently used idle conversation beyond the
// bound whose writes are done (one whose writes wait for the store would
// be read back without them). Called with p.mu held.
func (p *Proxy) evict() {
	if p.opts.Store == nil || len(p.convs) <= p.maxConvs {
		return
	}
	var victim *conversation
	for _, c := range p.convs {
		if c.refs == 0 && (victim == nil || c.used < victim.used) && !p.rec.pending(c.id) {
			victim = c
		}
	}
	if victim != nil {
		delete(p.convs, victim.id)
	}
}

// load reads what the store already holds of the conversation (a proxy
// restarted mid-conversation): its turns and rounds, so nothing is
// recorded twice, and its decisions, so every earlier result is sent with
// exactly the bytes it was sent before. Called with c.mu held.
func (c *conversation) load(ctx context.Context, st store.Store, rec *recorder) error {
	if c.loaded || st == nil {
		c.loaded = true
		return nil
	}
	c.loaded = true
	// Writes queued for the conversation must be in the store before it
	// is read back (evict keeps a conversation until its writes are
	// done, so this finds none but by a race). The wait is bounded: past
	// it (the store does not answer), what the store holds is read, and
	// a round still queued that this request queues again is stored once
	// (turnwriter.go).
	if err := rec.settle(ctx, c.id); err != nil && !errors.Is(err, errUnsettled) {
		return err
	}
	conv, err := st.Load(ctx, c.id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mirror = conv.Turns
	// The client goes on with a turn a dead proxy's successor marked
	// interrupted: it is open to this proxy, whose first write of it
	// resumes it in the store (see turnwriter.go).
	if n := len(c.mirror); n > 0 && c.mirror[n-1].Outcome == store.Interrupted {
		c.mirror[n-1].Outcome, c.mirror[n-1].Ended = "", time.Time{}
	}
	// A pause runs from the last answer relayed, which for a conversation
	// not in memory is the end of its last answered turn. A turn still
	// open gives none: the client's request carries an answer the store
	// has not seen (a round is stored when its results arrive), so the
	// newest stored round's Answered is only a lower bound, and a pause
	// measured from it could clear while the cache is warm. The idle
	// clear then waits for this proxy's first answer.
	if n := len(c.mirror); n > 0 && c.mirror[n-1].Outcome == harness.Answered {
		c.answered = c.mirror[n-1].Ended
	}
	for _, t := range conv.Turns {
		for _, r := range t.Rounds {
			for _, res := range r.Results {
				// Missing: a replica may have read some from the claim
				// log (replica_mirror.go).
				c.restoreMissing(res)
			}
		}
	}
	return c.restoreClears(ctx, st)
}

// restore rebuilds the decision of a stored result.
func (c *conversation) restore(res *harness.ToolResult) {
	h, _ := res.Meta[metaHash].(string)
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw) != sha256.Size {
		return
	}
	d := &decision{res: res, claimed: true}
	copy(d.hash[:], raw)
	if len(res.Cuts) > 0 || res.Model != nil {
		// A model copy of its own: cut, or a stub's schema appended.
		d.out = encodeString(res.ModelText())
	}
	c.decided[res.CallID] = append(c.decided[res.CallID], d)
}

// lookup returns the decision of a call's content by its fast hash, then
// (for decisions restored from the store, which carry only the SHA-256)
// by content, computing the SHA-256 only then.
func (c *conversation) lookup(callID string, fast uint64, content []byte) (*decision, [32]byte) {
	ds := c.decided[callID]
	for _, d := range ds {
		if d.fast == fast && d.fast != 0 {
			return d, d.hash
		}
	}
	hash := sha256.Sum256(content)
	for _, d := range ds {
		if d.hash == hash {
			d.fast = fast
			return d, hash
		}
	}
	return nil, hash
}

// awaitInflight waits until the answers this history builds on are
// recorded: a client may send the next request before the proxy has read
// the end of the previous answer. Called with c.mu held; it may release
// it while waiting.
func (c *conversation) awaitInflight(ctx context.Context, h *history) error {
	for ti, t := range h.Turns {
		for ri := range t.Rounds {
			ch := c.inflight[roundKey{ti + 1, ri + 1}]
			if ch == nil {
				continue
			}
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
			}
			c.mu.Lock()
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// cacheBreak reports whether the proxy changed an element the client did
// not: an element the client sent exactly as in the previous request but
// the proxy sent differently breaks the upstream's prompt cache.
func (c *conversation) cacheBreak(in, out []uint64) bool {
	broke := false
	for i := 0; i < len(c.prevIn) && i < len(in) && i < len(c.prevOut) && i < len(out); i++ {
		if c.prevIn[i] != in[i] {
			break // the client changed its history here; what follows is new
		}
		if c.prevOut[i] != out[i] {
			broke = true
			break
		}
	}
	c.prevIn, c.prevOut = in, out
	return broke
}

// now is the proxy's clock (Options.Now).
func (p *Proxy) now() time.Time { return p.opts.Now() }

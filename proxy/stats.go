package proxy

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentharness/harness/internal/numfmt"
)

// Stats are the proxy's running totals, as GET /stats reports them: the
// requests this process served since it started (Since), and the savings
// of every call the store holds.
type Stats struct {
	// Since is when this process started counting. Replica, set when it
	// shares its store with other replicas (Options.Shared), names it
	// among them: behind a load balancer each replica counts only the
	// requests it served, so every figure but Savings is the answering
	// replica's; Savings, kept in the store, cover every replica.
	Since   time.Time `json:"since"`
	Replica string    `json:"replica,omitempty"`
	// Requests counts model calls (of a known wire format) answered;
	// Unreadable those whose body the format could not read (forwarded
	// unchanged); Conversations the conversations taken into memory (one
	// forgotten and reloaded from the store counts again).
	Requests      int64 `json:"requests"`
	Unreadable    int64 `json:"unreadable"`
	Conversations int64 `json:"conversations"`
	// Forks counts the conversations made because a request's history
	// diverged from its conversation's stored one (see fork.go); each is
	// counted in Conversations too.
	Forks int64 `json:"forks"`
	// BytesIn is what clients sent in model calls, BytesOut what the
	// proxy forwarded; BytesRemoved = BytesIn − BytesOut.
	BytesIn      int64 `json:"bytes_in"`
	BytesOut     int64 `json:"bytes_out"`
	BytesRemoved int64 `json:"bytes_removed"`
	// ResultsDecided counts tool results seen for the first time (each
	// decided once), ResultsCut those whose model copy is not the result
	// as sent, ResultsReused the later sightings sent with the decided
	// bytes.
	ResultsDecided int64 `json:"results_decided"`
	ResultsCut     int64 `json:"results_cut"`
	ResultsReused  int64 `json:"results_reused"`
	// CacheBreaks counts requests in which the proxy sent differently a
	// history element the client sent exactly as before: each would cost
	// the upstream's prompt cache. Per-call decisions never cause one; an
	// idle clear is one (counted here and in IdleClears), made when the
	// cache it breaks has already expired. A replica (Options.Shared)
	// checks a request only against its own previous one of the
	// conversation, when no other replica served one in between.
	CacheBreaks int64 `json:"cache_breaks"`
	// IdleClears counts requests at which the idle clear acted (after a
	// pause longer than the upstream's cache lives: see
	// Options.ClearWhenIdle); IdleClearedResults the results it cleared
	// and IdleClearedBytes the bytes that removed from the request, which
	// every later request of the conversation is spared too.
	IdleClears         int64 `json:"idle_clears"`
	IdleClearedResults int64 `json:"idle_cleared_results"`
	IdleClearedBytes   int64 `json:"idle_cleared_bytes"`
	// UpstreamErrors counts answers with an error status (or none).
	UpstreamErrors int64 `json:"upstream_errors"`
	// RecordErrors counts store writes that failed. RecordRetries counts
	// the writes the store refused because another writer (another proxy
	// on the same database) held the conversation, and that were tried
	// again after a wait.
	RecordErrors  int64 `json:"record_errors"`
	RecordRetries int64 `json:"record_retries"`
	// Upstream sums the usage the upstream reported.
	Upstream Tokens `json:"upstream_tokens"`
	// ByConversation holds the same figures per conversation id, for
	// the statsConversations (1,024) conversations served most recently:
	// a proxy that runs for months serves an unbounded number of them.
	// ConversationsDropped counts those whose figures were dropped to make
	// room (least recently served first); the totals above still count
	// them.
	ByConversation       map[string]ConversationStats `json:"by_conversation,omitempty"`
	ConversationsDropped int64                        `json:"conversations_dropped,omitempty"`
	// Savings are the tokens and dollars the proxy's cuts saved, by day,
	// client, project and model: every call in the store, when the store
	// keeps savings, or since the proxy started. Set by GET /stats only.
	Savings *SavingsReport `json:"savings,omitempty"`

	// served orders ByConversation's ids by their last call (clock).
	served map[string]uint64
	clock  uint64
	// tenants holds each tenant's own totals (tenant.go), in the proxy's
	// Stats only; own marks a tenant's, which keeps no ByConversation.
	tenants *tenantTotals
	own     bool
}

// statsConversations bounds Stats.ByConversation.
const statsConversations = 1024

// Tokens are the token counts an upstream reported: input (cached
// included), the cached part of it, and output.
type Tokens struct {
	Input  int64 `json:"input"`
	Cached int64 `json:"cached"`
	Output int64 `json:"output"`
}

// ConversationStats are one conversation's figures in [Stats].
type ConversationStats struct {
	Requests     int64 `json:"requests"`
	BytesIn      int64 `json:"bytes_in"`
	BytesOut     int64 `json:"bytes_out"`
	BytesRemoved int64 `json:"bytes_removed"`
	CacheBreaks  int64 `json:"cache_breaks"`
	// The idle clears of the conversation, as in Stats.
	IdleClears         int64  `json:"idle_clears"`
	IdleClearedResults int64  `json:"idle_cleared_results"`
	IdleClearedBytes   int64  `json:"idle_cleared_bytes"`
	Upstream           Tokens `json:"upstream_tokens"`
}

// Stats returns the running totals.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	s := p.stats
	s.served, s.tenants = nil, nil
	if p.stats.ByConversation != nil {
		s.ByConversation = make(map[string]ConversationStats, len(p.stats.ByConversation))
		for id, cs := range p.stats.ByConversation {
			cs.BytesRemoved = cs.BytesIn - cs.BytesOut
			s.ByConversation[id] = cs
		}
	}
	p.mu.Unlock()
	if p.replicas.log != nil {
		s.Replica = p.replicas.id
	}
	s.BytesRemoved = s.BytesIn - s.BytesOut
	s.RecordErrors = p.rec.errors()
	s.RecordRetries = p.rec.busyRetries()
	return s
}

// countIn adds to the running totals with fn: the proxy's, and tenant's
// own unless tenant is "" (tenants off).
func (p *Proxy) countIn(tenant string, fn func(*Stats)) {
	p.mu.Lock()
	fn(&p.stats)
	if tenant != "" {
		fn(p.stats.tenant(tenant))
	}
	p.mu.Unlock()
}

func (t *Tokens) add(u Tokens) {
	t.Input, t.Cached, t.Output = t.Input+u.Input, t.Cached+u.Cached, t.Output+u.Output
}

// countConversation adds a finished call to its conversation's figures.
func (s *Stats) countConversation(c *call, used Tokens) {
	if s.own {
		return // a tenant's totals: its conversations are the proxy's
	}
	s.serve(c.conv.id)
	cs := s.ByConversation[c.conv.id]
	cs.Requests++
	cs.BytesIn += int64(len(c.in))
	cs.BytesOut += int64(c.outLen())
	if c.cacheBreak {
		cs.CacheBreaks++
	}
	if c.idleCleared > 0 {
		cs.IdleClears++
		cs.IdleClearedResults += int64(c.idleCleared)
		cs.IdleClearedBytes += c.idleBytes
	}
	cs.Upstream.add(used)
	s.ByConversation[c.conv.id] = cs
}

// serve marks id as served now, making room in ByConversation for a new
// id by dropping the least recently served one. The scan for it is linear,
// and runs only when a new conversation finds the map full.
func (s *Stats) serve(id string) {
	if s.ByConversation == nil {
		s.ByConversation, s.served = map[string]ConversationStats{}, map[string]uint64{}
	}
	if _, ok := s.ByConversation[id]; !ok && len(s.ByConversation) >= statsConversations {
		oldest := leastRecent(s.served)
		delete(s.ByConversation, oldest)
		delete(s.served, oldest)
		s.ConversationsDropped++
	}
	s.clock++
	s.served[id] = s.clock
}

// leastRecent returns the key of used with the lowest clock ("" when
// used is empty): the entry a bounded map drops to make room.
func leastRecent(used map[string]uint64) string {
	oldest, at := "", uint64(0)
	for k, t := range used {
		if oldest == "" || t < at {
			oldest, at = k, t
		}
	}
	return oldest
}

func (p *Proxy) serveStats(w http.ResponseWriter, r *http.Request) {
	keep, tenant := p.statsFilter(r)
	if tenant != "" {
		w.Header().Set("X-Harness-Tenant", tenant)
	}
	s := p.statsFor(keep, tenant)
	if rep, err := p.savings.report(r.Context(), p.opts.Prices, keep); err != nil {
		p.logf("harness proxy: reading savings: %v", err)
	} else {
		s.Savings = &rep
	}
	body, _ := json.MarshalIndent(s, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(append(body, '\n'))
}

// logRequest writes the request's line: format, conversation, round, bytes
// in and out, results decided and cut, upstream status and usage, and the
// time the proxy spent before forwarding. It never prints a header.
func (p *Proxy) logRequest(c *call, status int, rep *reply, prepared time.Duration) {
	if p.opts.Log == nil {
		return
	}
	var b strings.Builder
	b.WriteString("harness proxy: " + callLabel(c) + ": " + numfmt.Thousands(int64(len(c.in))) + " → " + numfmt.Thousands(int64(c.outLen())) + " bytes, " +
		numfmt.Thousands(int64(c.decided)) + " new result(s), " + numfmt.Thousands(int64(c.cut)) + " cut, " + numfmt.Thousands(int64(c.reused)) + " reused")
	if c.idleCleared > 0 {
		b.WriteString(", " + numfmt.Thousands(int64(c.idleCleared)) + " cleared after " + c.idle.Round(time.Second).String() + " idle")
	}
	if d := c.deferred; len(d.stubbed) > 0 {
		b.WriteString(", " + numfmt.Thousands(int64(len(d.stubbed))) + " tools as stubs (tools " + numfmt.Thousands(int64(d.bytesIn)) + " → " + numfmt.Thousands(int64(d.bytesOut)) + " bytes)")
	}
	if c.cacheBreak {
		b.WriteString(", CACHE BREAK")
	}
	b.WriteString("; upstream " + numfmt.Thousands(int64(status)))
	if rep != nil && rep.Seen {
		b.WriteString(" input " + numfmt.Thousands(int64(rep.Usage.Input)) + " (cached " + numfmt.Thousands(int64(rep.Usage.Cached)) + ") output " + numfmt.Thousands(int64(rep.Usage.Output)))
	}
	b.WriteString("; proxy " + prepared.Round(10*time.Microsecond).String())
	p.logf("%s", b.String())
}

// callLabel names a call in the log: its format, conversation, turn and
// round.
func callLabel(c *call) string {
	id := "-"
	if c.conv != nil {
		id = c.conv.id
	}
	s := c.format.name() + " " + id
	if c.key.turn > 0 {
		s += " turn " + numfmt.Thousands(int64(c.key.turn)) + " round " + numfmt.Thousands(int64(c.key.round))
	}
	return s
}

// logUnreachable writes the line of a request the upstream did not answer
// (the client got a 502 naming err): what was sent, and why it failed.
func (p *Proxy) logUnreachable(what string, err error) {
	p.logf("harness proxy: %s: the upstream did not answer, the client got a 502: %v", what, err)
}

// spillPage returns the spill file a call's arguments name (a Read of it,
// a cat or sed of it in a shell), or "".
func spillPage(args []byte, root string) string {
	s := string(args)
	i := strings.Index(s, root+string(filepath.Separator))
	if i < 0 {
		return ""
	}
	end := strings.IndexAny(s[i:], "\"' \t\n\\;|&)")
	if end < 0 {
		end = len(s) - i
	}
	return s[i : i+end]
}

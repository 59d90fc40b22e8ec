package proxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"strings"
)

// Tenants. A proxy in front of a team (Options.TenantSecret set) keeps
// each credential's conversations apart: a request belongs to the tenant
// its credential names, a keyed hash (HMAC-SHA-256 under the secret) of
// the credential, never the credential itself. The tenant prefixes the
// conversation's id ("t<16 hex>-…"), so the conversations, their spill
// folders and their stored transcripts are per tenant; GET /stats shows a
// caller only its own tenant's conversations and totals (by the
// credential it sends, as a model call would), a request without one
// nothing, the admin token (Options.AdminToken) everything. A result is
// read as a page of a spill file only when the file is its own tenant's.

// noTenant is the tenant of a model call that carries no credential (the
// upstream refuses it; its conversation is kept apart from every
// credential's).
const noTenant = "tnone"

// credential returns what authenticates a request to the upstream: the
// first of Authorization, x-api-key, x-goog-api-key and Gemini's ?key=.
func credential(r *http.Request) string {
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
		if v := strings.TrimSpace(r.Header.Get(h)); v != "" {
			return v
		}
	}
	return r.URL.Query().Get("key")
}

// tenantOf returns the tenant of a request ("" when tenants are off,
// noTenant for a request without a credential).
func (p *Proxy) tenantOf(r *http.Request) string {
	if p.opts.TenantSecret == nil {
		return ""
	}
	cred := credential(r)
	if cred == "" {
		return noTenant
	}
	// A bearer token and the same token in x-api-key are one tenant.
	if len(cred) > 7 && strings.EqualFold(cred[:7], "bearer ") {
		cred = strings.TrimSpace(cred[7:])
	}
	m := hmac.New(sha256.New, p.opts.TenantSecret)
	m.Write([]byte(cred))
	return "t" + hex.EncodeToString(m.Sum(nil))[:16]
}

// tenantConversation puts a conversation id in the request's tenant.
func (p *Proxy) tenantConversation(r *http.Request, id string) string {
	if t := p.tenantOf(r); t != "" {
		return t + "-" + id
	}
	return id
}

// isAdmin reports whether a request carries the admin token as a bearer
// token.
func (p *Proxy) isAdmin(r *http.Request) bool {
	if p.opts.AdminToken == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(p.opts.AdminToken)) == 1
}

// statsFilter returns which conversations a /stats request may see: all
// (nil) without tenants or for the admin, else those of its tenant (none
// without a credential). tenant names the caller's tenant ("" for all).
func (p *Proxy) statsFilter(r *http.Request) (keep func(convID string) bool, tenant string) {
	if p.opts.TenantSecret == nil || p.isAdmin(r) {
		return nil, ""
	}
	t := p.tenantOf(r)
	if t == noTenant {
		return func(string) bool { return false }, t
	}
	return func(id string) bool { return strings.HasPrefix(id, t+"-") }, t
}

// tenantStats is s as a caller whose filter is keep, of tenant, may see
// it: only the conversations it keeps, and its tenant's own totals (the
// proxy-wide totals would tell one tenant of another's traffic). The
// store's write counters are the proxy's alone: a tenant sees them 0.
func tenantStats(s Stats, keep func(string) bool, own Stats) Stats {
	if keep == nil {
		return s
	}
	out := own
	out.Since, out.Replica = s.Since, s.Replica
	out.ByConversation, out.ConversationsDropped = nil, 0
	for id, cs := range s.ByConversation {
		if !keep(id) {
			continue
		}
		if out.ByConversation == nil {
			out.ByConversation = map[string]ConversationStats{}
		}
		out.ByConversation[id] = cs
	}
	out.BytesRemoved = out.BytesIn - out.BytesOut
	return out
}

// statsFor returns the Stats a caller whose filter is keep, of tenant,
// may see (see statsFilter).
func (p *Proxy) statsFor(keep func(string) bool, tenant string) Stats {
	if keep == nil {
		return p.Stats()
	}
	var own Stats
	if tenant != noTenant {
		own = p.tenantTotalsOf(tenant)
	}
	return tenantStats(p.Stats(), keep, own)
}

// statsTenants bounds the tenants whose totals a proxy keeps.
const statsTenants = 4096

// tenantTotals holds each tenant's own totals, for the statsTenants
// tenants served most recently (credentials are anyone's to make up).
type tenantTotals struct {
	by    map[string]*Stats
	used  map[string]uint64
	clock uint64
}

// tenant returns tenant's totals in s (the proxy's), making room for a
// new tenant by dropping the least recently counted one. Called under the
// proxy's lock.
func (s *Stats) tenant(tenant string) *Stats {
	tt := s.tenants
	if tt == nil {
		tt = &tenantTotals{by: map[string]*Stats{}, used: map[string]uint64{}}
		s.tenants = tt
	}
	ts := tt.by[tenant]
	if ts == nil {
		if len(tt.by) >= statsTenants {
			oldest := leastRecent(tt.used)
			delete(tt.by, oldest)
			delete(tt.used, oldest)
		}
		ts = &Stats{own: true}
		tt.by[tenant] = ts
	}
	tt.clock++
	tt.used[tenant] = tt.clock
	return ts
}

// tenantTotalsOf returns a copy of tenant's own totals.
func (p *Proxy) tenantTotalsOf(tenant string) Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tt := p.stats.tenants; tt != nil && tt.by[tenant] != nil {
		s := *tt.by[tenant]
		s.own = false
		return s
	}
	return Stats{}
}

// tenantIn returns the tenant of a conversation ("" when tenants are off).
func (p *Proxy) tenantIn(convID string) string {
	if p.opts.TenantSecret == nil {
		return ""
	}
	return strings.TrimSuffix(tenantPrefix(convID), "-")
}

// ownPage returns path when it names a spill file of a conversation of
// convID's tenant (or tenants are off), else "": a client cannot make the
// proxy treat another tenant's spill file as a page it reads.
func (p *Proxy) ownPage(convID, path, root string) string {
	if path == "" || p.opts.TenantSecret == nil {
		return path
	}
	tenant := tenantPrefix(convID)
	if tenant == "" {
		return ""
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	if !strings.HasPrefix(first, tenant) {
		return ""
	}
	return path
}

// tenantPrefix returns the tenant part of a conversation id ("t<16
// hex>-" or "tnone-"), or "".
func tenantPrefix(id string) string {
	t, _, ok := strings.Cut(id, "-")
	if !ok || (t != noTenant && (len(t) != 17 || t[0] != 't' || strings.Trim(t[1:], "0123456789abcdef") != "")) {
		return ""
	}
	return t + "-"
}

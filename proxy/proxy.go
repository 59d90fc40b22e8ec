package proxy

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/redact"
	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/stack"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/toolselect"
)

// Defaults of [Options].
const (
	// DefaultMaxRequestBytes bounds a request body: far above any real
	// agent's request (a 1,000-message history is a few MiB), far below
	// what would exhaust the proxy's memory.
	DefaultMaxRequestBytes = 64 << 20
	// DefaultMaxResponseBytes bounds an upstream answer, streamed or not.
	DefaultMaxResponseBytes = 256 << 20
	// DefaultBodyReadTimeout bounds how long a client may take to send a
	// request body: minutes for the largest body the request limit admits
	// on a slow link, far less than a connection trickling bytes holds
	// the proxy's memory and sockets for.
	DefaultBodyReadTimeout = time.Minute
	// ConversationHeader names the request header that sets a
	// conversation's key explicitly; it is not forwarded.
	ConversationHeader = "X-Harness-Conversation"
)

// Options configure a [Proxy]; the zero value of every field but Upstream
// means its default.
type Options struct {
	// Upstream says where requests are forwarded: a base URL (scheme,
	// host and an optional path prefix) every request goes to, or one per
	// provider, "anthropic=URL,openai=URL,gemini=URL,chatgpt=URL,codeassist=URL"
	// (Messages; Responses and Chat Completions; Gemini; the Responses
	// calls of Codex signed in with ChatGPT, told by their
	// ChatGPT-Account-Id header; Google's Code Assist, /v1internal:…,
	// which Gemini CLI signed in with Google calls), each left out going
	// to the provider's public endpoint, as all do when Upstream is empty,
	// but chatgpt, which goes where openai does when only openai is named. A
	// request of no known wire format goes to the provider of the client
	// on whose route it came (Route), else of the credential header it
	// carries (see upstream.go).
	Upstream string
	// Store records every proxied conversation (nil records nothing): an
	// SQLite file or a PostgreSQL database (store/sqlite, store/postgres).
	// It must also be a store.TurnResumer, as both are, since a proxied
	// turn is the client's and may be continued by another proxy.
	Store store.Store
	// Workspace is the folder whose .harness/spill/<conversation>/
	// receives spilled results ("" means the working directory). Spill
	// locators are absolute paths, so the agent's own file tools can read
	// them whatever its working directory.
	Workspace string
	// Stack is the default stack each new tool result's model copy is
	// decided by, the same one harness run builds (nil is the default:
	// the result ceiling by the call spilling into Workspace, then
	// Collapse, and the turn budget). The ceiling spills into Workspace
	// unless it names its own store; the stuck verdict, recall and
	// compaction's other triggers never apply to proxied requests, and its
	// idle clear is set by ClearWhenIdle (see the package doc).
	Stack *stack.Config
	// MaxRequestBytes and MaxResponseBytes bound bodies (defaults above).
	// MaxRequestBytes also bounds a request's memory: what the proxy
	// allocates for a request is linear in its body whatever the shape of
	// its results (the body, its parse, the rewritten copy, and for each
	// result decided anew its text, a spill file of at most four times
	// it and a preview); docs/design.md, "Memory per request", gives the
	// measured factor.
	MaxRequestBytes, MaxResponseBytes int64
	// BodyReadTimeout bounds the time from a request's headers to the end
	// of its body (0: DefaultBodyReadTimeout; negative: none); a client
	// slower than that gets a 408 and its connection is closed. It is a
	// read deadline on the connection, lifted once the body is read, so
	// an answer streamed for longer is not cut. The server in front of
	// the proxy bounds the headers (http.Server.ReadHeaderTimeout).
	BodyReadTimeout time.Duration
	// Client sends upstream requests; nil means a client that never
	// follows redirects (so credentials reach the upstream only).
	Client *http.Client
	// Log, when set, gets one line per proxied request.
	Log io.Writer
	// Now is the proxy's clock (nil: time.Now): the idle time of a
	// conversation is measured on it, and stored turns are dated by it.
	Now func() time.Time
	// ClearWhenIdle is how long a conversation must have been idle — the
	// time since the proxy finished relaying its last answer — before the
	// proxy clears its old tool results (see idle.go and the package doc).
	// Zero is auto, the default: the cache lifetime the request's wire
	// format documents (Anthropic 5 minutes, or an hour when a
	// cache_control block asks for "ttl": "1h"; OpenAI an hour, never with
	// "prompt_cache_retention": "24h"; Gemini never), as the engine's
	// default clears after the lifetime its model's provider documents.
	// A positive value is used for every
	// format; a negative value is an error.
	ClearWhenIdle time.Duration
	// NoClearWhenIdle turns the idle clear off: every result keeps its
	// first decision for good, whatever the pauses.
	NoClearWhenIdle bool
	// DeferTools offers the MCP tools of a Messages, Responses or Gemini
	// request (and of opencode's Chat Completions requests) that the
	// conversation's first user prompt does not select as stubs
	// (toolselect.Stub), the way the engine's deferring selector does
	// with the client's own tools pinned; the same bytes on every request
	// of the conversation. MCP tools are told by the naming rule of the
	// client the request comes from (opencode's by its User-Agent). A
	// client's own tools are never touched, nor a tool no rule matches,
	// nor the tools of a client that defers them itself. A later
	// error result of a stubbed tool's call whose arguments did not fit
	// gets the full schema appended, decided once (see defer.go).
	DeferTools bool
	// Prices prices the tokens saved in Stats.Savings and on the page at
	// GET / (nil: catalog.ListPrices).
	Prices *catalog.Prices
	// Shared says other proxy processes serve the same conversations from
	// Store, a client's requests landing on any of them: every decision
	// is then claimed in the store before the request is forwarded, and a
	// conversation another process advanced is read again (see
	// replica.go). Store must be a store.Claimer (both stores are).
	Shared bool
	// TenantSecret, when set, keeps the conversations of each credential
	// apart: a request belongs to the tenant an HMAC-SHA-256 of its
	// credential under this secret names (see tenant.go). Keep it secret
	// and unchanged: a new secret makes every tenant a new one.
	TenantSecret []byte
	// AdminToken, with TenantSecret, is the bearer token whose GET
	// /stats sees every tenant.
	AdminToken string
}

// Proxy is an http.Handler that forwards agent requests to their
// upstream model API and, on the way, decides once — the first time it is seen —
// the model copy of every tool result in the request's history, then
// sends exactly those bytes every time after (see the package doc).
type Proxy struct {
	opts      Options
	upstreams upstreams
	client    *http.Client
	engine    *harness.Engine
	budget    arrivalBudget
	// spill receives the results the idle clear takes that no ceiling
	// spilled: the ceiling's own store.
	spill spill.Store
	seed  maphash.Seed
	rec   *recorder
	// savings counts and keeps what the cuts saved (savings.go).
	savings *savings
	// replicas is the claim log shared with the other proxies on the
	// store (Options.Shared, replica.go).
	replicas *replicas
	// ranker ranks the tools Options.DeferTools selects among (it caches
	// its index across requests).
	ranker toolselect.Ranker
	// eventReaders keeps the buffered readers answers are relayed
	// through (relayEvents).
	eventReaders sync.Pool
	// bodies keeps the buffers request bodies are read into (bodybuf.go).
	bodies bodyPool

	mu    sync.Mutex
	convs map[string]*conversation
	// chains maps Responses answer ids to their conversations (chain.go).
	chains chains
	tick   int64
	// maxConvs is maxConversations (tests lower it).
	maxConvs int
	stats    Stats
	// routes are the clients registered by Route, by token.
	routes map[string]*Client
	// recent are the latest parses, for reuse by the requests that extend
	// them (see walkBody).
	recent []*request
	// active counts requests being served; idle is signalled when it
	// drops to zero (Flush waits for it).
	active int
	idle   *sync.Cond
}

// New returns a proxy for opts (nil: every default). Call Close to finish
// recording.
func New(opts *Options) (*Proxy, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	ups, err := parseUpstreams(o.Upstream)
	if err != nil {
		return nil, &UpstreamError{Reason: redact.Text(err.Error())}
	}
	if o.Workspace == "" {
		o.Workspace = "."
	}
	if o.Workspace, err = filepath.Abs(o.Workspace); err != nil {
		return nil, fmt.Errorf("proxy: workspace: %w", err)
	}
	if o.ClearWhenIdle < 0 {
		return nil, fmt.Errorf("proxy: ClearWhenIdle %s is negative (zero is auto; NoClearWhenIdle turns the idle clear off)", o.ClearWhenIdle)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	client := o.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	st, cfg := proxyStack(o.Stack, o.Workspace)
	eng, err := newEngine(st, o.Workspace)
	if err != nil {
		return nil, err
	}
	p := &Proxy{opts: o, upstreams: ups, client: client, engine: eng, budget: turnBudget(cfg), spill: cfg.Ceiling.Store,
		seed: maphash.MakeSeed(), convs: map[string]*conversation{}, maxConvs: maxConversations, ranker: &toolselect.BM25{}}
	p.idle = sync.NewCond(&p.mu)
	p.stats.Since = p.now()
	p.replicas = newReplicas(o.Store, o.Shared)
	var rs recordStore
	if o.Store != nil {
		var ok bool
		if rs, ok = o.Store.(recordStore); !ok {
			return nil, fmt.Errorf("proxy: the store %T cannot resume a turn another writer began (store.TurnResumer)", o.Store)
		}
	}
	if o.Shared {
		if _, ok := o.Store.(store.Claimer); !ok {
			return nil, fmt.Errorf("proxy: Shared needs a store with a claim log (store.Claimer), not %T", o.Store)
		}
	}
	p.rec = newRecorder(rs, p.logf)
	var sl store.SavingsLog
	if o.Store != nil {
		sl, _ = any(o.Store).(store.SavingsLog)
	}
	p.savings = newSavings(sl, p.logf)
	if rs != nil {
		p.rec.probe, p.rec.outage, p.rec.back = storeProbe(o.Store), func(err error) { p.replicaFailed("recording", err) }, p.replicaOK
	}
	return p, nil
}

// Close waits until everything observed has been recorded in the store
// (a write refused because another writer holds its conversation is
// retried for up to a minute first) and returns the last recording error.
// It does not close the store; stop the server in front of the proxy
// first.
func (p *Proxy) Close() error {
	p.waitIdle(context.Background())
	_ = p.savings.flush(context.Background())
	return p.rec.close()
}

// Flush waits until the requests being served have finished — their
// answers relayed and counted in Stats — and everything observed so far
// is recorded in the store. A client receives the end of an answer just
// before the proxy counts it, so read Stats after Flush.
func (p *Proxy) Flush(ctx context.Context) error {
	if err := p.waitIdle(ctx); err != nil {
		return err
	}
	if err := p.savings.flush(ctx); err != nil {
		return err
	}
	return p.rec.flush(ctx)
}

// waitIdle waits until no request is being served.
func (p *Proxy) waitIdle(ctx context.Context) error {
	return waitUntil(ctx, &p.mu, p.idle, func() bool { return p.active == 0 })
}

// waitUntil waits on c (whose lock is mu) until done holds or ctx ends.
func waitUntil(ctx context.Context, mu *sync.Mutex, c *sync.Cond, done func() bool) error {
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		c.Broadcast()
		mu.Unlock()
	})
	defer stop()
	mu.Lock()
	defer mu.Unlock()
	for !done() && ctx.Err() == nil {
		c.Wait()
	}
	return ctx.Err()
}

// track counts a request being served until the returned func is called.
func (p *Proxy) track() func() {
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.active--
		if p.active == 0 {
			p.idle.Broadcast()
		}
		p.mu.Unlock()
	}
}

// ServeHTTP routes a request (after taking off the prefix of a client's
// route, see Route; a loopback POST to /_harness/routes registers one):
// a browser's GET / gets the savings page, GET /stats
// answers from the proxy, model calls of a known wire format are rewritten
// and forwarded, anything else is forwarded unchanged.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer p.track()()
	if r.URL.Path == routesPath {
		p.serveRoutes(w, r)
		return
	}
	if r = p.onRoute(r); r == nil {
		proxyError(w, http.StatusNotFound, "not_found_error", "harness proxy: no client is registered on this route (was its launcher stopped?)")
		return
	}
	if r.URL.Path == "/stats" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		p.serveStats(w, r)
		return
	}
	if r.URL.Path == "/" && r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
		// A browser's; a client's probe of its base URL (HEAD, or GET
		// without HTML) still reaches the upstream.
		p.servePage(w, r)
		return
	}
	f := formatOf(r)
	if f == nil {
		p.forwardUnchanged(w, r)
		return
	}
	p.serveModelCall(w, r, f)
}

// formatOf returns the wire format of a model call, or nil.
func formatOf(r *http.Request) wireFormat {
	if r.Method != http.MethodPost {
		return nil
	}
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/v1/messages"):
		return anthropicFormat{}
	case strings.HasSuffix(p, "/responses"):
		return responsesFormat{}
	case strings.HasSuffix(p, "/chat/completions"):
		return chatFormat{}
	case strings.Contains(p, "/models/") && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		return geminiFormat{}
	case strings.HasSuffix(p, "/v1internal:generateContent") || strings.HasSuffix(p, "/v1internal:streamGenerateContent"):
		return codeAssistFormat{}
	}
	return nil
}

// logf writes a line to Options.Log, any credential it quotes redacted
// (errors from the upstream quote its URL).
func (p *Proxy) logf(format string, args ...any) {
	if p.opts.Log != nil {
		line := redact.Text(fmt.Sprintf(format, args...))
		p.mu.Lock()
		io.WriteString(p.opts.Log, line+"\n")
		p.mu.Unlock()
	}
}

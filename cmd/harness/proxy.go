package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/guard"
	"github.com/agentharness/harness/internal/redact"
	"github.com/agentharness/harness/internal/stackflags"
	"github.com/agentharness/harness/policy"
	"github.com/agentharness/harness/proxy"
	"github.com/agentharness/harness/spill"
	"github.com/agentharness/harness/stack"
)

const proxySummary = `Put harness's per-call guards in front of any agent: point the agent's model
endpoint at the proxy (ANTHROPIC_BASE_URL, an OpenAI base_url, GOOGLE_GEMINI_BASE_URL, CODE_ASSIST_ENDPOINT)
and every tool result in its requests gets its model copy decided once — a
ceiling with a spill file the agent reads with its own tools, a smaller one
for the output of programs it runs, repeats collapsed, and the turn's
evidence budget — and the same bytes every time after, so the upstream's prompt cache
stays warm. Speaks the Anthropic Messages API, the OpenAI Responses API (and
ChatGPT's, Codex signed in with ChatGPT) and Chat Completions, and the Gemini
API (and Google's Code Assist, Gemini CLI signed in with Google), streamed or
not; anything else passes through. Every conversation is recorded in the transcript store ("harness log",
"harness audit", "harness bench" read it). GET /stats reports the upstream's
token counts, the bytes removed and the cache breaks the proxy caused, and
the tokens and dollars saved (also on the page at /, and "harness savings").
Credentials are forwarded to the upstream only, never stored or logged.
With --db postgres://… several proxies serve the same conversations as
replicas, and each credential's conversations and /stats are its own
tenant's (docs/gateway.md).`

// cmdProxy runs "harness proxy".
func cmdProxy(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "proxy", "", proxySummary)
	listen := fs.String("listen", "127.0.0.1:8787", "address to listen on (loopback unless --allow-remote)")
	upstream := fs.String("upstream", "", "where model calls go: one base URL for every request, or anthropic=URL,openai=URL,gemini=URL,chatgpt=URL,codeassist=URL\n"+
		"(Messages; Responses and Chat Completions; Gemini; Codex signed in with ChatGPT; Gemini CLI signed in with Google), each left out\n"+
		"going to its provider's public endpoint, as all do by default (chatgpt: where openai goes when only openai is named)")
	var sf storeFlags
	sf.register(fs)
	spillDir := fs.String("spill-dir", "", "spill files go to DIR/.harness/spill/<conversation>/ (default: the workspace)")
	allowRemote := fs.Bool("allow-remote", false, "allow a listen address that is not loopback")
	maxReq := fs.Int64("max-request-bytes", proxy.DefaultMaxRequestBytes, "largest request body accepted")
	maxResp := fs.Int64("max-response-bytes", proxy.DefaultMaxResponseBytes, "largest upstream answer relayed")
	ceiling := fs.Int("max-result-bytes", guard.DefaultMaxBytes, "ceiling of one tool result's model copy (0: no ceiling); at the default, 8 KiB for a\n"+
		"search's, a listing's or git's output and 10 KiB for a shell's other output after two spills")
	runCeiling := fs.Int("run-ceiling", guard.DefaultRunCeilingBytes, "ceiling in bytes of the output of a shell command that runs a program (tests, builds, scripts),\n"+
		"cut at arrival when over 3 KiB; 0 turns it off (the output then gets --max-result-bytes)")
	noCollapse := fs.Bool("no-collapse", false, "do not collapse lines a result repeats from an earlier one")
	turnBudget := fs.Int("turn-budget", policy.DefaultTurnChars, fmt.Sprintf("evidence budget of a turn in characters: the results new in a request share what is left of it, over the\n"+
		"turn's first %d rounds (later rounds' results pass whole); 0 turns it off", harness.DefaultMaxRounds))
	quiet := fs.Bool("quiet", false, "no line per request on standard error")
	deferTools := fs.Bool("defer-tools", false, "offer the MCP tools (Claude Code's mcp__*, Codex's mcp__* namespaces, Gemini CLI's mcp_*, opencode's SERVER_TOOL with the closed\n"+
		"schema its MCP adapter gives, on requests whose User-Agent names opencode) the conversation's first prompt does not select\n"+
		"as stubs (name, first sentence, parameter names), the same bytes on every request; the client's own tools stay whole, and\n"+
		"a stub's call whose arguments do not fit gets the full schema appended to its error (see lab/NOTEBOOK.md, \"Deferred MCP tools in the proxy\")")
	pricesFile := fs.String("prices", "", "price table for the savings on the page at / and in /stats (JSON, or TOML for a .toml file; see harness savings -h)")
	secretFile := fs.String("tenant-secret-file", "", "with tenants (a postgres:// --db, or a listen address off loopback), the file of the secret each credential's\n"+
		"tenant id is an HMAC-SHA-256 under (default WORKSPACE/.harness/tenant-secret, generated with mode 0600 when absent; give every replica the same one)")
	adminFile := fs.String("admin-token-file", "", "with tenants, a file holding the bearer token whose GET /stats sees every tenant")
	var idle stackflags.IdleClear
	fs.Var(&idle, "clear-when-idle", "after a pause longer than the upstream's prompt cache lives, clear old tool results (all but the newest 4 rounds\n"+
		"and the ones the agent quoted), each to a line naming a file with the whole result: auto (the default: each wire format's\n"+
		"documented lifetime: Anthropic 5m, 1h with a cache_control ttl of 1h; OpenAI 1h, never with prompt_cache_retention 24h;\n"+
		"Gemini never), off, or a duration for every format (see lab/NOTEBOOK.md, \"Cold caches\")")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *ceiling < 0 || *runCeiling < 0 || *turnBudget < 0 {
		return fmt.Errorf("%w: --max-result-bytes, --run-ceiling and --turn-budget take sizes ≥ 0 (0 turns the part off)", errUsage)
	}
	if idle.After < 0 {
		return fmt.Errorf("%w: --clear-when-idle %s: want auto, off or a positive duration such as 10m or 1h", errUsage, idle.After)
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	if err := checkLoopback(*listen, *allowRemote); err != nil {
		return err
	}
	ws := proxySpillRoot(*spillDir, sf.workspace)
	st, err := openDB(ctx, sf.path(), ws, false, true)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := &proxy.Options{Upstream: *upstream, Store: st, Workspace: ws, MaxRequestBytes: *maxReq, MaxResponseBytes: *maxResp, Log: e.stderr,
		ClearWhenIdle: idle.After, NoClearWhenIdle: idle.Off, DeferTools: *deferTools,
		// Proxies on one PostgreSQL database are replicas of each other.
		Shared: isDSN(sf.path())}
	if *quiet {
		opts.Log = nil
	}
	if opts.Prices, err = loadPrices(*pricesFile); err != nil {
		return err
	}
	if err := proxyTenants(opts, sf, *listen, *secretFile, *adminFile); err != nil {
		return err
	}
	absWS, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	opts.Stack = proxyStackConfig(absWS, *ceiling, *runCeiling, *turnBudget, *noCollapse)
	px, err := proxy.New(opts)
	if err != nil {
		return upstreamUsage(err)
	}
	ln, err := listenProxy(*listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: px, ReadHeaderTimeout: time.Minute}
	// A replica's name is how /stats tells whose counters it shows.
	replica := ""
	if r := px.Stats().Replica; r != "" {
		replica = ", as replica " + r
	}
	fmt.Fprintf(e.stderr, "harness proxy: listening on http://%s, forwarding to %s, recording to %s%s, spilling under %s\n",
		ln.Addr(), redact.Text(px.Upstreams()), st.Path(), replica, filepath.Join(absWS, filepath.FromSlash(spill.Folder)))
	return serveProxy(ctx, srv, ln, px)
}

// upstreamUsage makes an unusable --upstream a usage error that names the
// flag; any other error passes as it is.
func upstreamUsage(err error) error {
	var ue *proxy.UpstreamError
	if errors.As(err, &ue) {
		return fmt.Errorf("%w: --upstream %s", errUsage, ue.Reason)
	}
	return err
}

// serveProxy serves px on ln until the server fails or ctx is cancelled
// (then it shuts down, letting requests in flight finish for up to 10 s),
// and closes px, which waits until everything it observed is recorded.
func serveProxy(ctx context.Context, srv *http.Server, ln net.Listener, px *proxy.Proxy) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	}
	if cerr := px.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// proxyStackConfig is the stack the proxy's switches describe: the
// ceiling spilling under absWS, the run ceiling, Collapse and the turn
// budget, each off at 0 (the library's zero values mean "default"). The
// default ceiling is the library's: a ceiling by the call.
func proxyStackConfig(absWS string, ceiling, runCeiling, turnBudget int, noCollapse bool) *stack.Config {
	maxBytes := ceiling
	if ceiling == guard.DefaultMaxBytes {
		maxBytes = 0
	}
	c := &stack.Config{Ceiling: &guard.ResultPolicy{MaxBytes: maxBytes, NoCeiling: ceiling == 0, Store: proxy.SpillStore(absWS)}, NoCollapse: noCollapse}
	switch {
	case runCeiling == 0:
		c.NoRunCeiling = true
	case runCeiling != guard.DefaultRunCeilingBytes:
		c.RunCeiling = &guard.RunCeiling{MaxBytes: runCeiling}
	}
	switch {
	case turnBudget == 0:
		c.NoTurnBudget = true
	case turnBudget != policy.DefaultTurnChars:
		c.TurnBudget = &policy.TurnBudget{Chars: turnBudget}
	}
	return c
}

// proxySpillRoot is the folder whose .harness/spill/ receives spill files:
// --spill-dir (a path ending in .harness/spill names that folder itself),
// else the workspace.
func proxySpillRoot(dir, workspace string) string {
	if dir == "" {
		return workspace
	}
	clean := filepath.Clean(dir)
	if suffix := filepath.FromSlash(spill.Folder); strings.HasSuffix(clean, string(filepath.Separator)+suffix) || clean == suffix {
		return filepath.Dir(filepath.Dir(clean))
	}
	return clean
}

// checkLoopback refuses a listen address off the machine unless asked:
// the proxy forwards credentials, so it fails closed.
func checkLoopback(addr string, allow bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --listen %q: %v", errUsage, addr, err)
	}
	if allow || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: --listen %q is not a loopback address; the proxy forwards credentials, so pass --allow-remote to listen there", errUsage, addr)
}

// proxyTenants turns tenants on in opts when the proxy needs them (see
// tenantsNeeded), with the secret and admin token the flags name.
func proxyTenants(opts *proxy.Options, sf storeFlags, listen, secretFile, adminFile string) error {
	if !tenantsNeeded(sf.path(), listen) {
		if adminFile != "" {
			return fmt.Errorf("%w: --admin-token-file needs tenants: a postgres:// --db or a listen address off loopback (%s is loopback)", errUsage, listenHost(listen))
		}
		return nil
	}
	if secretFile == "" {
		secretFile = filepath.Join(sf.workspace, ".harness", "tenant-secret")
	}
	secret, err := loadTenantSecret(secretFile)
	if err != nil {
		return err
	}
	opts.TenantSecret = secret
	if adminFile != "" {
		tok, err := readSecretFile(adminFile, "admin token")
		if err != nil {
			return err
		}
		opts.AdminToken = string(tok)
	}
	return nil
}

// listenProxy listens on addr; an address in use gets an error that says
// what may hold it and what to pass instead.
func listenProxy(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s is in use, perhaps by another harness proxy (HARNESS_PROXY=http://%s harness claude … reuses one): "+
			"pass --listen with another port, or 127.0.0.1:0 for any free one: %w", addr, addr, err)
	}
	return ln, err
}

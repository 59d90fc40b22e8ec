package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentharness/harness"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultCallTimeout bounds a call when Options.CallTimeout and the
// server's own timeout are zero.
const DefaultCallTimeout = 60 * time.Second

// Defaults used when an Options field is zero.
const (
	defaultStartTimeout    = 30 * time.Second
	defaultMaxMessageBytes = 64 << 20
	defaultStderrTail      = 4 << 10
	defaultRestartBackoff  = time.Second
	// maxRestartBackoff caps the wait between restarts of a server that
	// keeps wedging.
	maxRestartBackoff = time.Minute
)

// stopGrace is how long a stopping stdio server gets after its stdin is
// closed, and again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// Options configure Open. The zero value (or nil) means
// defaults.
type Options struct {
	// CallTimeout bounds each call (default 60 s); a server's own
	// "timeout" wins. A call that times out is cancelled on the server and
	// becomes an IsError result with TimedOut set.
	CallTimeout time.Duration
	// StartTimeout bounds starting a server and listing its tools (default
	// 30 s).
	StartTimeout time.Duration
	// MaxMessageBytes bounds one message from a server (default 64 MiB).
	// A larger result is refused and the server restarted: it cannot be
	// read without holding it whole in memory.
	MaxMessageBytes int
	// StderrTail is how much of a stdio server's stderr is kept for error
	// messages (default 4 KiB).
	StderrTail int
	// Stderr, when set, also receives every stdio server's stderr.
	Stderr io.Writer
	// HTTPClient is used for HTTP servers (default http.DefaultClient's
	// transport).
	HTTPClient *http.Client
	// Reserved lists tool names already taken (built-in tools): an MCP tool
	// with one of these names is namespaced "server__tool".
	Reserved []string
	// OnToolsChanged is called when a server says its tool list changed
	// (notifications/tools/list_changed). The next Tools call lists the
	// server again; an agent built earlier keeps its tools until rebuilt.
	// It runs on the connection's goroutine and must not block.
	OnToolsChanged func(server string)
	// ClientName and ClientVersion are sent to servers (default "harness").
	ClientName, ClientVersion string
	// RestartBackoff spaces the restarts of a server that stops answering:
	// after a call times out and the server does not answer a ping either,
	// its session is closed and it is started again by the first call
	// RestartBackoff later (default 1 s); each further time in a row waits
	// twice as long, at most maxRestartBackoff. A call before then is an
	// IsError result saying when. A negative value restarts at once.
	RestartBackoff time.Duration
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.CallTimeout <= 0 {
		out.CallTimeout = DefaultCallTimeout
	}
	if out.StartTimeout <= 0 {
		out.StartTimeout = defaultStartTimeout
	}
	if out.MaxMessageBytes <= 0 {
		out.MaxMessageBytes = defaultMaxMessageBytes
	}
	if out.StderrTail <= 0 {
		out.StderrTail = defaultStderrTail
	}
	if out.RestartBackoff == 0 {
		out.RestartBackoff = defaultRestartBackoff
	}
	if out.ClientName == "" {
		out.ClientName = "harness"
	}
	if out.ClientVersion == "" {
		out.ClientVersion = "dev"
	}
	return out
}

// server is a connection to one MCP server that restarts itself: when the
// server dies or disconnects, the call in flight gets an IsError result and
// the next call starts it again. It is safe for concurrent use.
type server struct {
	cfg    ServerConfig
	opts   Options
	client *mcp.Client

	mu       sync.Mutex // guards conn, listing and restarts
	conn     *conn
	tools    []*mcp.Tool
	listed   bool
	restarts int
	wedged   int       // calls in a row that timed out on a server that then ignored a ping
	notUntil time.Time // no restart before this (back-off after wedging)

	stale atomic.Bool // a list_changed arrived since the last listing
}

// conn is one session with a server.
type conn struct {
	sess   *mcp.ClientSession
	proc   *process // stdio servers only
	closed chan struct{}
	once   sync.Once
	// check is the health check in flight on this session, nil when
	// none (guarded by Server.mu).
	check *healthCheck
}

func (c *conn) close() {
	c.once.Do(func() {
		_ = c.sess.Close()
		if c.proc != nil {
			_ = c.proc.stop()
		}
		close(c.closed)
	})
}

func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// connect starts (or reaches) one server and lists its tools. The error
// names the server and, for a stdio server, carries the tail of its
// stderr.
func connect(ctx context.Context, sc ServerConfig, opts *Options) (*server, error) {
	s := &server{cfg: sc, opts: opts.withDefaults()}
	s.client = mcp.NewClient(&mcp.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion}, &mcp.ClientOptions{
		ToolListChangedHandler: s.toolsChanged,
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.connectLocked(ctx); err != nil {
		return nil, err
	}
	if err := s.listLocked(ctx); err != nil {
		s.conn.close()
		return nil, err
	}
	return s, nil
}

// Name returns the server's name from the config.
func (s *server) Name() string { return s.cfg.Name }

// Config returns the server's configuration.
func (s *server) Config() ServerConfig { return s.cfg }

// Restarts counts the times the server was started again after a failure.
func (s *server) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// PID returns the process id of a running stdio server, or 0.
func (s *server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.conn.proc == nil || s.conn.isClosed() {
		return 0
	}
	return s.conn.proc.pid()
}

// Close stops the server.
func (s *server) Close() error {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	return nil
}

func (s *server) toolsChanged(ctx context.Context, req *mcp.ToolListChangedRequest) {
	s.stale.Store(true)
	if s.opts.OnToolsChanged != nil {
		s.opts.OnToolsChanged(s.cfg.Name)
	}
}

// connectLocked starts a session; s.mu is held.
func (s *server) connectLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	var (
		transport mcp.Transport
		proc      *process
		err       error
	)
	switch {
	case s.cfg.Transport != nil:
		transport, err = s.cfg.Transport(ctx)
	case s.cfg.Type == typeStdio || (s.cfg.Type == "" && s.cfg.Command != ""):
		var stdout io.ReadCloser
		proc, stdout, err = startProcess(&s.cfg, s.opts.StderrTail, stopGrace, s.opts.Stderr)
		if err == nil {
			transport = &commandTransport{proc: proc, stdout: stdout, maxFrame: s.opts.MaxMessageBytes}
		}
	case s.cfg.Type == typeHTTP:
		transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: s.opts.MaxMessageBytes}
	case s.cfg.Type == typeSSE:
		transport = detachedTransport{&mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxEventSize: s.opts.MaxMessageBytes}}
	default:
		err = fmt.Errorf("unknown transport type %q", s.cfg.Type)
	}
	if err != nil {
		return s.startError(err, nil)
	}
	sess, err := s.client.Connect(ctx, transport, nil)
	if err != nil {
		if proc != nil {
			// Let a crashing server finish writing why.
			proc.waitExit(time.Second)
			_ = proc.stop()
		}
		return s.startError(err, proc)
	}
	c := &conn{sess: sess, proc: proc, closed: make(chan struct{})}
	go func() {
		// The session ends when the server goes away (EOF, HTTP failure).
		_ = sess.Wait()
		c.close()
	}()
	if proc != nil {
		go func() {
			// A dead process whose pipe a grandchild still holds open
			// would otherwise leave calls waiting for their timeout.
			select {
			case <-proc.exited:
				c.close()
			case <-c.closed:
			}
		}()
	}
	s.conn = c
	return nil
}

func (s *server) startError(err error, proc *process) error {
	msg := fmt.Sprintf("mcptool: MCP server %q failed to start: %v", s.cfg.Name, err)
	if proc != nil {
		if st := proc.exitStatus(); st != "" {
			msg += " (" + st + ")"
		}
		if tail := proc.stderr.String(); tail != "" {
			msg += "\nstderr of " + s.cfg.Name + ":\n" + indent(tail)
		}
	}
	return errors.New(msg)
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// detachedTransport connects with a context that is never cancelled: the
// SSE transport ties its event stream to the context of Connect, which
// carries the start timeout.
type detachedTransport struct{ t mcp.Transport }

func (d detachedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return d.t.Connect(context.WithoutCancel(ctx))
}

// httpClient returns a client that adds the configured headers and bounds
// a JSON response body to MaxMessageBytes (the go-sdk reads it whole;
// event streams are bounded per event by MaxEventSize instead).
func (s *server) httpClient() *http.Client {
	base := s.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = httpTransport{rt: rt, headers: s.cfg.Headers, max: int64(s.opts.MaxMessageBytes)}
	return &c
}

type httpTransport struct {
	rt      http.RoundTripper
	headers map[string]string
	max     int64
}

func (h httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.rt.RoundTrip(req)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		resp.Body = &limitedBody{rc: resp.Body, left: h.max, max: h.max}
	}
	return resp, err
}

// limitedBody fails a read past max bytes instead of buffering them.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		n, err := l.rc.Read(probe[:])
		if n > 0 {
			return 0, fmt.Errorf("the server's response is larger than the %d-byte limit (Options.MaxMessageBytes)", l.max)
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }

// session returns a live session, starting the server again when the last
// one ended.
func (s *server) session(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if c := s.conn; c != nil && c.check != nil {
		// A call timed out on this session and its health check is
		// still running (at most pingTimeout): wait for its verdict
		// rather than send a call to a server that may be wedged.
		h := c.check
		s.mu.Unlock()
		select {
		case <-h.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.isClosed() {
		return s.conn, nil
	}
	restart := s.conn != nil
	if wait := time.Until(s.notUntil); wait > 0 {
		return nil, fmt.Errorf("it stopped answering %d time(s) in a row; the next restart in %s", s.wedged, wait.Round(time.Second))
	}
	if err := s.connectLocked(ctx); err != nil {
		return nil, err
	}
	if restart {
		s.restarts++
		// A restarted server may offer other tools.
		s.stale.Store(true)
		harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: "mcp",
			Detail: fmt.Sprintf("MCP server %q was restarted (restart %d)", s.cfg.Name, s.restarts)})
	}
	return s.conn, nil
}

// ListTools returns the server's tools, listing them again (every page)
// when the server said the list changed or was restarted.
func (s *server) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed && !s.stale.Load() {
		return s.tools, nil
	}
	if s.conn == nil || s.conn.isClosed() {
		if err := s.connectLocked(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.listLocked(ctx); err != nil {
		return nil, err
	}
	return s.tools, nil
}

func (s *server) listLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	// Cleared before listing: a change announced during the listing makes
	// the next call list again.
	s.stale.Store(false)
	var tools []*mcp.Tool
	for t, err := range s.conn.sess.Tools(ctx, nil) {
		if err != nil {
			s.stale.Store(true)
			return fmt.Errorf("mcptool: listing the tools of MCP server %q: %w", s.cfg.Name, err)
		}
		tools = append(tools, t)
	}
	s.tools, s.listed = tools, true
	return nil
}

// Call calls one tool by its MCP name with args (a JSON object; empty
// means {}). Failures the model can act on are IsError results: the tool's
// own error, a refused call, a timeout (TimedOut set), a server that died
// or disconnected (it is started again on the next call), a server that
// cannot be started. The error is non-nil only when ctx is done.
func (s *server) Call(ctx context.Context, tool string, args json.RawMessage) (*harness.ToolResult, error) {
	c, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return harness.ErrorResult("%s: MCP server %q is down and could not be started again: %v", tool, s.cfg.Name, err), nil
	}
	timeout := s.cfg.Timeout
	if timeout <= 0 {
		timeout = s.opts.CallTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := c.sess.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		s.answered()
		return convertResult(res), nil
	case ctx.Err() != nil:
		// The caller gave up first (a tool timeout shorter than the
		// server's): the server's health is still checked, on a context
		// of its own, and a wedged server restarted on the next call.
		if !c.isClosed() {
			s.checkHealth(ctx, c, tool)
		}
		return nil, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && !c.isClosed():
		return s.timedOut(ctx, c, tool, timeout), nil
	case errors.As(err, &wire) && wire.Code == codeRejected && !c.isClosed():
		// The HTTP transport lost this request (a dropped connection, an
		// HTTP error status) but keeps the session. Whether the server is
		// still there decides between "retry" and "restart".
		if perr := s.reachable(ctx, c); perr == nil {
			return harness.ErrorResult("%s: the call to MCP server %q was lost in transport (%v). The server is still reachable; check whether the call took effect before repeating it.", tool, s.cfg.Name, err), nil
		}
	case errors.As(err, &wire) && !errors.Is(err, mcp.ErrConnectionClosed) && !c.isClosed():
		// The server answered with a protocol error (unknown tool, invalid
		// params): the session is fine.
		return harness.ErrorResult("%s: MCP server %q refused the call: %s (code %d)", tool, s.cfg.Name, wire.Message, wire.Code), nil
	}
	why := s.broken(c, err)
	harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: "mcp",
		Detail: fmt.Sprintf("MCP server %q stopped during a call to %s: %s", s.cfg.Name, tool, why)})
	return harness.ErrorResult("%s: MCP server %q stopped during the call (%s). It will be started again on the next call; check whether this call took effect before repeating it.", tool, s.cfg.Name, why), nil
}

// timedOut answers a call that timed out. A server that still answers a
// ping is only slow at this call and keeps its session; one that does not
// is wedged (alive, answering nothing), so every later call would time out
// too: its session is closed and the next call starts it again, after a
// back-off when it keeps wedging (see Options.RestartBackoff).
func (s *server) timedOut(ctx context.Context, c *conn, tool string, timeout time.Duration) *harness.ToolResult {
	msg := fmt.Sprintf("%s: MCP server %q did not answer within %s; the call was cancelled.", tool, s.cfg.Name, timeout)
	h := s.checkHealth(ctx, c, tool)
	<-h.done
	if h.alive {
		r := harness.ErrorResult("%s Try narrower arguments, or another approach.", msg)
		r.TimedOut = true
		return r
	}
	r := harness.ErrorResult("%s It did not answer a ping either, so it was stopped and will be restarted on the next call; check whether this call took effect before repeating it.", msg)
	r.TimedOut = true
	return r
}

// healthCheck is a ping of a session after a call on it timed out.
type healthCheck struct {
	done  chan struct{} // closed when the verdict is in
	alive bool          // the server answered the ping
}

// checkHealth pings c after a call to tool timed out, unless a check of c
// is already in flight (that one is returned). The ping runs in the
// background on a context of its own (pingTimeout), whatever is left of
// the caller's deadline; when it fails the session is closed as wedged, so
// the next call starts the server again (see wedge). session waits for the
// verdict before it hands c to another call.
func (s *server) checkHealth(ctx context.Context, c *conn, tool string) *healthCheck {
	s.mu.Lock()
	if h := c.check; h != nil {
		s.mu.Unlock()
		return h
	}
	h := &healthCheck{done: make(chan struct{})}
	c.check = h
	s.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	go func() {
		h.alive = s.ping(ctx, c) == nil
		if !h.alive && !c.isClosed() {
			s.wedge(ctx, c, tool)
		}
		s.mu.Lock()
		c.check = nil
		s.mu.Unlock()
		close(h.done)
	}()
	return h
}

// wedge closes the session of a server that answered neither a call to
// tool nor a ping (alive, answering nothing, so every later call would time
// out too): the next call starts it again, after a back-off when it keeps
// wedging (see Options.RestartBackoff).
func (s *server) wedge(ctx context.Context, c *conn, tool string) {
	s.mu.Lock()
	s.wedged++
	if n := s.wedged; s.opts.RestartBackoff > 0 {
		d := s.opts.RestartBackoff << min(n-1, 16)
		s.notUntil = time.Now().Add(min(d, maxRestartBackoff))
	}
	s.mu.Unlock()
	why := s.broken(c, errors.New("no answer to the call nor to a ping"))
	harness.Emit(ctx, harness.Event{Kind: harness.EventWarning, Policy: "mcp",
		Detail: fmt.Sprintf("MCP server %q stopped answering during a call to %s: %s", s.cfg.Name, tool, why)})
}

// answered resets the wedge count after a call the server answered.
func (s *server) answered() {
	s.mu.Lock()
	s.wedged, s.notUntil = 0, time.Time{}
	s.mu.Unlock()
}

// codeRejected is the JSON-RPC code the go-sdk gives a request its
// transport failed to deliver while the session stays up ("rejected by
// transport").
const codeRejected = -32005

// pingTimeout bounds the check that a server is still reachable.
const pingTimeout = 5 * time.Second

// reachable checks that the session still answers after the transport
// lost a request: it pings twice, since the first ping after a dropped
// connection may go out on a pooled connection that the drop closed (a
// POST is not retried by net/http), and fail without the server being
// gone.
func (s *server) reachable(ctx context.Context, c *conn) error {
	if err := s.ping(ctx, c); err == nil || ctx.Err() != nil {
		return err
	}
	return s.ping(ctx, c)
}

// ping checks that the session still answers.
func (s *server) ping(ctx context.Context, c *conn) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
	defer cancel()
	return c.sess.Ping(ctx, nil)
}

// broken closes a failed session and describes why it failed: the error,
// the exit status and the tail of stderr of a stdio server.
func (s *server) broken(c *conn, err error) string {
	why := err.Error()
	if c.proc != nil {
		c.proc.waitExit(500 * time.Millisecond)
		if st := c.proc.exitStatus(); st != "" {
			why += "; the process " + st
		}
	}
	c.close()
	if c.proc != nil {
		if tail := c.proc.stderr.String(); tail != "" {
			why += "; stderr tail:\n" + lastLines(tail, 20)
		}
	}
	return why
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentharness/harness/internal/redact"
)

// hopHeaders are connection-level headers a proxy must not forward
// (RFC 9110, section 7.6.1), plus the proxy's own conversation header.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", ConversationHeader}

// target is the upstream URL of a request path (its upstream: see
// upstream.go). An upstream with a path
// prefix keeps it; when the prefix already ends with the request's first
// segment ("…/v1" and "/v1/messages") that segment is not doubled.
func (p *Proxy) target(r *http.Request) string {
	up, path := p.upstreams.of(r)
	u := *up
	base := strings.TrimRight(u.Path, "/")
	if base != "" {
		if first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/"); first != "" && strings.HasSuffix(base, "/"+first) {
			path = strings.TrimPrefix(path, "/"+first)
		}
	}
	u.Path = base + path
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	return u.String()
}

// upstreamRequest builds the request to the upstream: the client's method,
// headers (credentials included, hop-by-hop headers dropped) and body.
// Accept-Encoding is dropped so the transport negotiates compression and
// hands the proxy plain bytes to parse.
func (p *Proxy) upstreamRequest(ctx context.Context, r *http.Request, body sentBody) (*http.Request, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, p.target(r), nil)
	if err != nil {
		return nil, err
	}
	if n := body.size(); body.in != nil && n == 0 {
		out.Body, out.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	} else if body.in != nil {
		// Readers of our own, each holding the body's buffer until the
		// transport closes it; GetBody is the rewind a retry needs.
		out.Body = body.open()
		out.GetBody = func() (io.ReadCloser, error) { return body.open(), nil }
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if c := r.Header.Get("Connection"); c != "" {
		for _, h := range strings.Split(c, ",") {
			out.Header.Del(strings.TrimSpace(h))
		}
	}
	out.Header.Del("Accept-Encoding")
	out.Header.Del("Content-Length")
	if body.in != nil {
		out.ContentLength = int64(body.size())
	}
	return out, nil
}

// forwardUnchanged proxies a request the proxy does not read (HEAD /,
// model listings, token counting), streaming both bodies.
func (p *Proxy) forwardUnchanged(w http.ResponseWriter, r *http.Request) {
	bb, err := p.readBody(w, r)
	if err != nil {
		return
	}
	defer bb.release()
	req, err := p.upstreamRequest(r.Context(), r, sentBody{in: bb.bytes(), buf: bb})
	if err != nil {
		proxyError(w, http.StatusBadGateway, "upstream_error", err.Error())
		return
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.logUnreachable(r.Method+" "+r.URL.Path, err)
		proxyError(w, http.StatusBadGateway, "upstream_unreachable", "harness proxy: the upstream did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	_, _ = p.relay(w, resp, nil)
}

// readBody reads the client's body up to the request limit and within
// the body read timeout, into a buffer held once by the caller (nil for
// no body); over the limit, the client gets a 413 that names it, over the
// timeout a 408.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) (_ *bodyBuf, err error) {
	timedOut := false
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if d := p.opts.BodyReadTimeout; d > 0 {
		// A server that cannot set deadlines (a test recorder) reads
		// without one. The deadline is lifted after the body: the
		// server's background read would otherwise cancel the request
		// when it passes while the answer streams.
		// A body that did not arrive in time keeps the expired deadline,
		// so the server closes the connection instead of waiting for the
		// rest.
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) == nil {
			defer func() {
				if !timedOut {
					_ = rc.SetReadDeadline(time.Time{})
				}
			}()
		}
	}
	rd := http.MaxBytesReader(w, r.Body, p.opts.MaxRequestBytes)
	var body []byte
	var bb *bodyBuf
	if n := r.ContentLength; n > 0 && n <= p.opts.MaxRequestBytes {
		bb, err = p.bodies.read(rd, n)
		body = bb.bytes()
	} else {
		body, err = io.ReadAll(rd)
	}
	if err != nil {
		bb.release()
		var tooBig *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooBig):
			proxyError(w, http.StatusRequestEntityTooLarge, "request_too_large",
				fmt.Sprintf("harness proxy: the request body is larger than %d bytes (the proxy's request limit, --max-request-bytes)", p.opts.MaxRequestBytes))
		case errors.As(err, &netErr) && netErr.Timeout():
			timedOut = true
			w.Header().Set("Connection", "close")
			proxyError(w, http.StatusRequestTimeout, "request_timeout",
				fmt.Sprintf("harness proxy: the request body did not arrive within %s (the proxy's body read timeout)", p.opts.BodyReadTimeout))
			p.logf("harness proxy: %s %s: the request body did not arrive within %s; connection closed", r.Method, r.URL.Path, p.opts.BodyReadTimeout)
		default:
			proxyError(w, http.StatusBadRequest, "invalid_request_error", "harness proxy: reading the request body: "+err.Error())
		}
		return nil, err
	}
	if bb == nil {
		bb = &bodyBuf{b: body}
		bb.refs.Store(1)
	}
	return bb, nil
}

// errResponseTooLarge is reported when the upstream's answer passes the
// response limit.
var errResponseTooLarge = errors.New("the upstream's answer is larger than the proxy's response limit")

// maxParsedReply bounds what the proxy keeps of an answer to read its
// usage and calls: a non-streamed body, or one event of a stream. A
// model's answer is far smaller; a larger one is relayed whole but not
// read (and a log line says so). With the relay's 64 KiB line buffer and
// the copy's 32 KiB, an answer costs the proxy at most about 2×16 MiB
// (the kept copy and its growth) whatever its size: the response limit
// bounds what is relayed, not what is held.
const maxParsedReply = 16 << 20

// relayed is what relaying an answer did.
type relayed struct {
	// n counts the bytes relayed.
	n int64
	// unread is set when (part of) the answer was over maxParsedReply
	// and was relayed without being read.
	unread bool
}

// relay copies the upstream's answer to the client: status and headers as
// they are (errors, retry-after and all), a server-sent event stream event
// by event, each flushed as soon as it is complete, any other body as it
// arrives. When parse is set it is fed the events, or the body (each up
// to maxParsedReply). An answer over the response limit, announced or
// chunked, is cut there and logged. It returns the bytes relayed.
func (p *Proxy) relay(w http.ResponseWriter, resp *http.Response, parse replyParser) (int64, error) {
	limit := p.opts.MaxResponseBytes
	what := "the upstream's answer"
	if resp.Request != nil {
		what = resp.Request.Method + " " + resp.Request.URL.Path
	}
	if resp.ContentLength > limit {
		p.logf("harness proxy: %s: the upstream's answer is %d bytes, over the response limit of %d; answered 502", what, resp.ContentLength, limit)
		proxyError(w, http.StatusBadGateway, "response_too_large",
			fmt.Sprintf("harness proxy: the upstream's answer is %d bytes, larger than the proxy's response limit of %d (--max-response-bytes)", resp.ContentLength, limit))
		return 0, errResponseTooLarge
	}
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = append([]string(nil), vs...)
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	body := io.LimitReader(resp.Body, limit+1)
	var out relayed
	var err error
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		br, _ := p.eventReaders.Get().(*bufio.Reader)
		if br == nil {
			br = bufio.NewReaderSize(nil, eventBuffer)
		}
		br.Reset(body)
		out, err = relayEvents(w, fl, br, parse)
		br.Reset(nil)
		p.eventReaders.Put(br)
	} else {
		out, err = relayBody(w, fl, body, parse)
	}
	if err == nil && out.n > limit {
		err = errResponseTooLarge
		p.logf("harness proxy: %s: the upstream's answer passed the response limit of %d bytes (--max-response-bytes); connection cut", what, limit)
	} else if out.unread && parse != nil {
		p.logf("harness proxy: %s: part of the upstream's answer is over %d bytes: relayed, not read (usage and calls may be missing)", what, maxParsedReply)
	}
	if err != nil && out.n > 0 {
		// The status is sent; the only honest signal left is to cut the
		// connection, so the client sees a broken answer, not a short one.
		panic(http.ErrAbortHandler)
	}
	return out.n, err
}

// eventBuffer is the size of the buffer an event stream is read through
// (Proxy.eventReaders keeps them for the next answer).
const eventBuffer = 64 << 10

// relayEvents copies a text/event-stream read through br event by event;
// an event over maxParsedReply is relayed as it arrives, unread.
func relayEvents(w io.Writer, fl http.Flusher, br *bufio.Reader, parse replyParser) (relayed, error) {
	var ev []byte
	var out relayed
	// big is set while an event over maxParsedReply is relayed.
	big := false
	write := func(b []byte) error {
		m, err := w.Write(b)
		out.n += int64(m)
		if err == nil && fl != nil {
			fl.Flush()
		}
		return err
	}
	emit := func() error {
		if len(ev) == 0 {
			return nil
		}
		if err := write(ev); err != nil {
			return err
		}
		if parse != nil && !big {
			name, data := parseEvent(ev)
			if data != nil {
				parse.event(name, data)
			}
		}
		ev = ev[:0]
		return nil
	}
	for {
		line, err := br.ReadSlice('\n')
		if len(ev)+len(line) > maxParsedReply {
			// Relay what is held and the rest of the event as it comes.
			big, out.unread = true, true
			if werr := emit(); werr != nil {
				return out, werr
			}
		}
		ev = appendDoubling(ev, line)
		full := errors.Is(err, bufio.ErrBufferFull)
		end := !full && len(line) > 0 && len(bytes.TrimRight(line, "\r\n")) == 0
		if big || end {
			if werr := emit(); werr != nil {
				return out, werr
			}
			big = big && !end
		}
		if full {
			continue
		}
		if err == io.EOF {
			return out, emit()
		}
		if err != nil {
			_ = emit()
			return out, err
		}
	}
}

// parseEvent returns an event's name and its data lines joined by "\n"
// (nil when it has none, as a comment or a keep-alive).
func parseEvent(ev []byte) (string, []byte) {
	var name string
	var data []byte
	seen := false
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		k, v, _ := bytes.Cut(line, []byte(":"))
		v = bytes.TrimPrefix(v, []byte(" "))
		switch string(k) {
		case "event":
			name = string(v)
		case "data":
			if seen {
				data = append(data, '\n')
			}
			data = append(data, v...)
			seen = true
		}
	}
	if !seen || bytes.Equal(data, []byte("[DONE]")) {
		return name, nil
	}
	return name, data
}

// relayBody copies any other body, keeping a copy of up to
// maxParsedReply bytes for parse.
func relayBody(w io.Writer, fl http.Flusher, body io.Reader, parse replyParser) (relayed, error) {
	var keep capWriter
	dst := w
	if parse != nil {
		dst = io.MultiWriter(w, &keep)
	}
	n, err := io.Copy(flushWriter{dst, fl}, body)
	out := relayed{n: n, unread: keep.over}
	if parse != nil && err == nil && !keep.over {
		parse.body(keep.buf)
	}
	return out, err
}

// capWriter keeps what is written to it up to maxParsedReply bytes, and
// nothing once more has come.
type capWriter struct {
	buf  []byte
	over bool
}

func (c *capWriter) Write(b []byte) (int, error) {
	if !c.over && len(c.buf)+len(b) > maxParsedReply {
		c.over, c.buf = true, nil
	}
	if !c.over {
		c.buf = appendDoubling(c.buf, b)
	}
	return len(b), nil
}

// appendDoubling appends b to buf, doubling its capacity when it grows:
// the allocations of a buffer grown to n bytes sum to 2n, where append's
// smaller steps for large slices sum to about 5n.
func appendDoubling(buf, b []byte) []byte {
	if len(buf)+len(b) > cap(buf) {
		nb := make([]byte, len(buf), max(2*cap(buf), len(buf)+len(b), 512))
		copy(nb, buf)
		buf = nb
	}
	return append(buf, b...)
}

// flushWriter flushes after every write, so a body the upstream sends in
// pieces reaches the client in the same pieces.
type flushWriter struct {
	w  io.Writer
	fl http.Flusher
}

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if f.fl != nil {
		f.fl.Flush()
	}
	return n, err
}

// proxyError answers with an error the proxy itself raises, in a shape
// both the Anthropic and the OpenAI SDKs read: {"type":"error","error":
// {"type":…, "message":…}}, with any credential msg quotes redacted.
func proxyError(w http.ResponseWriter, status int, typ, msg string) {
	// Messages quote upstream errors, and a *url.Error quotes the URL with
	// its query (Gemini's ?key=): no credential reaches the client.
	msg = redact.Text(msg)
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Harness-Proxy-Error", typ)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

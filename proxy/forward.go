package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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
	u := *p.upstreams.of(r)
	base := strings.TrimRight(u.Path, "/")
	path := r.URL.Path
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
func (p *Proxy) upstreamRequest(ctx context.Context, r *http.Request, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, p.target(r), rd)
	if err != nil {
		return nil, err
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
	if body != nil {
		out.ContentLength = int64(len(body))
	}
	return out, nil
}

// forwardUnchanged proxies a request the proxy does not read (HEAD /,
// model listings, token counting), streaming both bodies.
func (p *Proxy) forwardUnchanged(w http.ResponseWriter, r *http.Request) {
	body, err := p.readBody(w, r)
	if err != nil {
		return
	}
	req, err := p.upstreamRequest(r.Context(), r, body)
	if err != nil {
		proxyError(w, http.StatusBadGateway, "upstream_error", err.Error())
		return
	}
	resp, err := p.client.Do(req)
	if err != nil {
		proxyError(w, http.StatusBadGateway, "upstream_unreachable", "harness proxy: the upstream did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	_, _ = p.relay(w, resp, nil)
}

// readBody reads the client's body up to the request limit; over it, the
// client gets a 413 that names the limit.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	rd := http.MaxBytesReader(w, r.Body, p.opts.MaxRequestBytes)
	var body []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= p.opts.MaxRequestBytes {
		// One allocation of the announced size instead of ReadAll's
		// doublings: a megabyte of history costs a copy, not five.
		body = make([]byte, n)
		if _, err = io.ReadFull(rd, body); err == nil {
			var one [1]byte
			if m, _ := rd.Read(one[:]); m > 0 {
				err = errors.New("the body is longer than its Content-Length")
			}
		}
	} else {
		body, err = io.ReadAll(rd)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			proxyError(w, http.StatusRequestEntityTooLarge, "request_too_large",
				fmt.Sprintf("harness proxy: the request body is larger than %d bytes (the proxy's request limit, --max-request-bytes)", p.opts.MaxRequestBytes))
		} else {
			proxyError(w, http.StatusBadRequest, "invalid_request_error", "harness proxy: reading the request body: "+err.Error())
		}
		return nil, err
	}
	return body, nil
}

// errResponseTooLarge is reported when the upstream's answer passes the
// response limit.
var errResponseTooLarge = errors.New("the upstream's answer is larger than the proxy's response limit")

// relay copies the upstream's answer to the client: status and headers as
// they are (errors, retry-after and all), a server-sent event stream event
// by event, each flushed as soon as it is complete, any other body as it
// arrives. When parse is set it is fed the events, or the body (up to the
// response limit). It returns the bytes relayed.
func (p *Proxy) relay(w http.ResponseWriter, resp *http.Response, parse replyParser) (int64, error) {
	limit := p.opts.MaxResponseBytes
	if resp.ContentLength > limit {
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
	var n int64
	var err error
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		n, err = relayEvents(w, fl, body, parse)
	} else {
		n, err = relayBody(w, fl, body, parse, limit)
	}
	if err == nil && n > limit {
		err = errResponseTooLarge
	}
	if err != nil && n > 0 {
		// The status is sent; the only honest signal left is to cut the
		// connection, so the client sees a broken answer, not a short one.
		panic(http.ErrAbortHandler)
	}
	return n, err
}

// relayEvents copies a text/event-stream event by event.
func relayEvents(w io.Writer, fl http.Flusher, body io.Reader, parse replyParser) (int64, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	var ev []byte
	var n int64
	emit := func() error {
		if len(ev) == 0 {
			return nil
		}
		m, err := w.Write(ev)
		n += int64(m)
		if err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		if parse != nil {
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
		if errors.Is(err, bufio.ErrBufferFull) {
			ev = append(ev, line...)
			continue
		}
		ev = append(ev, line...)
		if len(bytes.TrimRight(line, "\r\n")) == 0 && len(line) > 0 {
			if werr := emit(); werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, emit()
		}
		if err != nil {
			_ = emit()
			return n, err
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

// relayBody copies any other body, keeping a copy for parse.
func relayBody(w io.Writer, fl http.Flusher, body io.Reader, parse replyParser, limit int64) (int64, error) {
	var keep bytes.Buffer
	dst := w
	if parse != nil {
		dst = io.MultiWriter(w, &keep)
	}
	n, err := io.Copy(flushWriter{dst, fl}, body)
	if parse != nil && err == nil && n <= limit {
		parse.body(keep.Bytes())
	}
	return n, err
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
// {"type":…, "message":…}}.
func proxyError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Harness-Proxy-Error", typ)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ErrIncompleteStream is wrapped by providers when a streamed response
// ends before its terminal event (the connection dropped mid-stream).
var ErrIncompleteStream = errors.New("the response stream ended before it was complete")

// Status reports whether an HTTP status is worth retrying: 429 (rate
// limited) and every 5xx, including Anthropic's 529 (overloaded). Other
// 4xx mean the request itself is wrong and would fail again.
func Status(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// Response is the verdict on an error answer with an HTTP status: the
// server's X-Should-Retry header decides when present (both official SDKs
// honour it), else the status does (see Status), with the wait the
// Retry-After headers ask for, read at now.
func Response(status int, h http.Header, now time.Time) Verdict {
	switch strings.ToLower(h.Get("X-Should-Retry")) {
	case "true":
		return Verdict{Retry: true}
	case "false":
		return Verdict{}
	}
	if !Status(status) {
		return Verdict{}
	}
	v := Verdict{Retry: true}
	v.After, v.HasAfter = RetryAfter(h, now)
	return v
}

// Transient reports whether err is a transport failure that a new attempt
// may not meet: a refused, reset or dropped connection, a body cut short,
// an attempt's own timeout, or a stream that ended early. A host name that
// does not resolve (NXDOMAIN) is not transient. The caller must
// check its own context first: a cancelled caller is never retried.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	switch {
	case errors.Is(err, ErrIncompleteStream),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded): // an attempt's timeout; the caller's own was checked
		return true
	}
	// A host that does not exist will not exist a second later: asking
	// the resolver again only delays the error. A resolver that timed out
	// or failed for now is retried like any other transport failure.
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// HTTP/2 stream and connection errors (RST_STREAM, GOAWAY) are
	// unexported types of net/http; their messages are stable.
	return strings.Contains(err.Error(), "http2: ")
}

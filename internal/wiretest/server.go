package wiretest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Event is one server-sent event. An empty Event name sends a data-only
// event (OpenAI's style); Anthropic names every event.
type Event struct {
	Event string
	Data  string
}

// Reply is one queued response.
type Reply struct {
	Status int // default 200
	Header http.Header
	// Body is sent as is (JSON replies and error bodies).
	Body string
	// Events, when set, are sent as a text/event-stream, flushed one by one.
	Events []Event
	// Drop closes the connection: before any response when Events is
	// empty, else after the events (a stream cut short).
	Drop bool
}

// JSON returns a 200 reply with a JSON body.
func JSON(body string) Reply { return Reply{Body: body} }

// Error returns a reply with the given status and JSON error body.
func Error(status int, body string) Reply { return Reply{Status: status, Body: body} }

// Stream returns a 200 event-stream reply.
func Stream(events ...Event) Reply { return Reply{Events: events} }

// Request is a recorded request.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Server is a loopback HTTP server playing queued replies.
type Server struct {
	*httptest.Server
	errorf func(format string, args ...any)

	// Respond, when set, answers every request that finds no queued
	// reply: a script that reads the request (its path, its history) and
	// plays the next step, for clients whose number and order of
	// requests a test cannot know in advance (real agent CLIs). Set it
	// before the first request.
	Respond func(Request) Reply

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{errorf: t.Errorf}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Start serves on ln outside a test (harness bench --through runs its
// recording upstream on it): what New reports to the test, a request
// with no reply or a body that cannot be read, goes to errorf. The caller
// closes the server.
func Start(ln net.Listener, errorf func(format string, args ...any)) *Server {
	s := &Server{errorf: errorf}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.Listener.Close()
	s.Server.Listener = ln
	s.Server.Start()
	return s
}

// Enqueue adds replies, played in order, one per request.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TakeRequests returns the requests received so far and forgets them, so
// a long-running server holds only those not yet taken.
func (s *Server) TakeRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

// Pending reports how many queued replies were not played.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.errorf("wiretest: reading the request body: %v", err)
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var rep Reply
	ok := len(s.replies) > 0
	if ok {
		rep, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	if !ok && s.Respond != nil {
		rep, ok = s.Respond(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}), true
	}
	if !ok {
		s.errorf("wiretest: unexpected request %s %s (no reply queued)", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"message":"wiretest: no reply queued"}}`, http.StatusTeapot)
		return
	}
	if rep.Drop && len(rep.Events) == 0 {
		hijackClose(s.errorf, w)
		return
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if len(rep.Events) == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	for _, ev := range rep.Events {
		io.WriteString(w, ev.Encode())
		if fl != nil {
			fl.Flush()
		}
	}
	if rep.Drop {
		hijackClose(s.errorf, w)
	}
}

// Encode returns the event in text/event-stream framing.
func (e Event) Encode() string {
	var b bytes.Buffer
	if e.Event != "" {
		fmt.Fprintf(&b, "event: %s\n", e.Event)
	}
	for _, line := range strings.Split(e.Data, "\n") {
		fmt.Fprintf(&b, "data: %s\n", line)
	}
	b.WriteByte('\n')
	return b.String()
}

// hijackClose closes the client's connection abruptly: with a chunked
// stream in flight the client sees an unexpected EOF, before any response
// it sees the connection close.
func hijackClose(errorf func(string, ...any), w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		errorf("wiretest: the response writer cannot be hijacked")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		errorf("wiretest: hijack: %v", err)
		return
	}
	conn.Close()
}

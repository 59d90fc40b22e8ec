package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hangBound only catches a hang: every wait below ends long before it
// when the proxy behaves.
const hangBound = 2 * time.Minute

// TestBodyReadDeadline: a client that sends its headers and then trickles
// (here: stops sending) its body gets a 408 and its connection closed once
// the body read timeout passes, on a model call and on a request the
// proxy forwards unchanged.
func TestBodyReadDeadline(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the upstream got %s %s", r.Method, r.URL.Path)
	}))
	defer up.Close()
	log := &syncWriter{w: &bytes.Buffer{}}
	px, err := New(&Options{Upstream: up.URL, Workspace: t.TempDir(), BodyReadTimeout: 50 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	srv := httptest.NewServer(px)
	defer srv.Close()
	for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(hangBound))
			if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"messages\":["); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "request_timeout") {
				t.Errorf("status %d %s, want 408", resp.StatusCode, body)
			}
			var one [1]byte
			if n, err := conn.Read(one[:]); err == nil || n > 0 {
				t.Errorf("the connection stays open (read %d, %v)", n, err)
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("the connection stays open until the hang bound")
			}
		})
	}
	if !strings.Contains(log.String(), "did not arrive within 50ms") {
		t.Errorf("no log line:\n%s", log)
	}
}

// TestBodyReadDeadlineLifted: the deadline covers the body only; an
// answer that comes later than it is relayed whole.
func TestBodyReadDeadlineLifted(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		<-release
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	defer close(release)
	px, err := New(&Options{Upstream: up.URL, Workspace: t.TempDir(), BodyReadTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	srv := httptest.NewServer(px)
	defer srv.Close()
	go func() {
		// Past the deadline (a lower bound: a slower machine only waits
		// longer).
		time.Sleep(200 * time.Millisecond)
		release <- struct{}{}
	}()
	resp, err := http.Post(srv.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || string(body) != `{"ok":true}` {
		t.Errorf("status %d body %q err %v", resp.StatusCode, body, err)
	}
}

// TestResponseLimitStreamed: an answer with no Content-Length (chunked,
// plain or a server-sent event that never ends) is cut at the response
// limit with a log line, and what the proxy allocates meanwhile stays
// near maxParsedReply whatever the answer's size; an answer under the
// limit but over maxParsedReply is relayed whole, unread, with a log line.
func TestResponseLimitStreamed(t *testing.T) {
	const limit = 64 << 20
	tests := []struct {
		name, ctype string
		size        int
		cut         bool
		log         string
	}{
		{"chunked json over the limit", "application/json", limit + 16<<20, true, "passed the response limit"},
		{"endless event over the limit", "text/event-stream", limit + 16<<20, true, "passed the response limit"},
		{"chunked json under the limit", "application/json", 24 << 20, false, "relayed, not read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.ctype)
				chunk := bytes.Repeat([]byte("x"), 64<<10)
				if tc.ctype == "text/event-stream" {
					io.WriteString(w, "data: ")
				}
				for sent := 0; sent < tc.size; sent += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}))
			defer up.Close()
			log := &syncWriter{w: &bytes.Buffer{}}
			px, err := New(&Options{Upstream: up.URL, Workspace: t.TempDir(), MaxResponseBytes: limit, Log: log})
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close()
			srv := httptest.NewServer(px)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			n, rerr := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			if tc.cut {
				if rerr == nil || n > limit+1 {
					t.Errorf("the client read %d bytes (err %v), want a broken answer of at most %d", n, rerr, limit)
				}
			} else if rerr != nil || n < int64(tc.size) {
				t.Errorf("the client read %d of %d bytes (err %v)", n, tc.size, rerr)
			}
			// Both the proxy's and the client's side of the test count
			// here; the old proxy kept the whole answer (≥ 2×limit in
			// allocations as its buffer doubled).
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MiB answer, limit %d MiB: %d MiB allocated", tc.size>>20, limit>>20, alloc>>20)
			if alloc > 3*maxParsedReply {
				t.Errorf("relaying allocated %d MiB, want at most %d", alloc>>20, 3*maxParsedReply>>20)
			}
			if err := px.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Errorf("no log line %q:\n%s", tc.log, log)
			}
		})
	}
}

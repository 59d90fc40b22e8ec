package wiretest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentharness/harness"
)

// Warnings collects the events a model reports through the context it is
// given (its retry warnings). It is safe for concurrent use.
type Warnings struct {
	mu     sync.Mutex
	events []harness.Event
}

// Context returns a context whose observer collects into w.
func (w *Warnings) Context() context.Context {
	return harness.WithObserver(context.Background(), func(e harness.Event) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.events = append(w.events, e)
	})
}

// Events returns the events collected so far.
func (w *Warnings) Events() []harness.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]harness.Event(nil), w.events...)
}

// ErrorSuite is the behaviour every provider's model shows on the error
// answers of its API, as one table of cases: a 429 is retried after its
// Retry-After, 5xx answers and dropped connections are retried until a
// success, a 4xx is not and says what the server said, a cancelled context
// ends a wait for a retry, and a request too large for the model's context
// is harness.ErrContextTooLarge at once. The fields give each case's
// bodies in the provider's wire format.
type ErrorSuite struct {
	// Model returns the model under test, served by srv, with its
	// default retry policy (a Retry-After up to 100 s honoured).
	Model func(t *testing.T, srv *Server) harness.Model
	// OK is an answer whose text is "ok".
	OK Reply
	// RateLimited is the body of a 429 answer; RateLimitedDetail, when
	// set, is what its retry warning's Detail must say.
	RateLimited       string
	RateLimitedDetail string
	// Transient are error answers to retry before OK.
	Transient []Reply
	// ClientError is the answer of status (4xx) for each of
	// ClientStatuses; ClientErrorText is what its error must say, and
	// CheckClientError (when set) checks the rest of it: the provider's
	// error type and the SDK's error in the chain.
	ClientError      func(status int) Reply
	ClientStatuses   []int
	ClientErrorText  string
	CheckClientError func(t *testing.T, status int, err error)
	// TooLarge are answers, by name, meaning the request exceeds the
	// model's context.
	TooLarge map[string]Reply
}

// generate sends the model of srv one user message and returns the
// answer's text.
func (s ErrorSuite) generate(ctx context.Context, t *testing.T, srv *Server) (string, error) {
	req := &harness.Request{Messages: []harness.Message{{Role: harness.RoleUser, Parts: []harness.Part{harness.TextPart("x")}}}}
	resp, err := s.Model(t, srv).Generate(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.Message.Text(), nil
}

// Run runs every case of the suite as a subtest of t.
func (s ErrorSuite) Run(t *testing.T) {
	t.Run("429 honours Retry-After", s.rateLimited)
	t.Run("5xx then success", s.transient)
	t.Run("no retry on 4xx", s.clientErrors)
	t.Run("cancel during backoff", s.cancelDuringBackoff)
	t.Run("context too large", s.tooLarge)
}

func (s ErrorSuite) rateLimited(t *testing.T) {
	srv := New(t)
	srv.Enqueue(Reply{Status: 429, Header: http.Header{"Retry-After": {"0.05"}}, Body: s.RateLimited}, s.OK)
	var w Warnings
	start := time.Now()
	text, err := s.generate(w.Context(), t, srv)
	if err != nil {
		t.Fatal(err)
	}
	// A lower bound only: a loaded machine waits longer, never shorter.
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("retried after %s, before the 50ms Retry-After", el)
	}
	if text != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("answer %q after %d requests", text, len(srv.Requests()))
	}
	ev := w.Events()
	if len(ev) != 1 || ev[0].Kind != harness.EventWarning || ev[0].Data["delay_ms"] != int64(50) || ev[0].Data["retry_after"] != true {
		t.Fatalf("events = %+v", ev)
	}
	if d := ev[0].Detail; s.RateLimitedDetail != "" && (!strings.Contains(d, "429") || !strings.Contains(d, s.RateLimitedDetail)) {
		t.Errorf("detail = %q, want 429 and %q", d, s.RateLimitedDetail)
	}
}

func (s ErrorSuite) transient(t *testing.T) {
	srv := New(t)
	srv.Enqueue(append(append([]Reply(nil), s.Transient...), s.OK)...)
	text, err := s.generate(context.Background(), t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(s.Transient) + 1; text != "ok" || len(srv.Requests()) != want {
		t.Errorf("answer %q after %d requests, want ok after %d", text, len(srv.Requests()), want)
	}
}

func (s ErrorSuite) clientErrors(t *testing.T) {
	for _, status := range s.ClientStatuses {
		srv := New(t)
		srv.Enqueue(s.ClientError(status), s.OK)
		_, err := s.generate(context.Background(), t, srv)
		if err == nil {
			t.Fatalf("%d: no error", status)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests, want 1", status, n)
		}
		if !strings.Contains(err.Error(), s.ClientErrorText) {
			t.Errorf("%d: %q does not contain %q", status, err, s.ClientErrorText)
		}
		if errors.Is(err, harness.ErrContextTooLarge) {
			t.Errorf("%d: reported as too large", status)
		}
		if s.CheckClientError != nil {
			s.CheckClientError(t, status, err)
		}
	}
}

func (s ErrorSuite) cancelDuringBackoff(t *testing.T) {
	srv := New(t)
	// The server asks for 100 s and the context is cancelled as the wait
	// begins (the retry's warning): only honouring the context returns
	// context.Canceled (a wait that ignored it would retry, unanswered).
	srv.Enqueue(Reply{Status: 429, Header: http.Header{"Retry-After": {"100"}}, Body: s.RateLimited})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = harness.WithObserver(ctx, func(e harness.Event) {
		if e.Kind == harness.EventWarning {
			cancel()
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := s.generate(ctx, t, srv)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Minute):
		t.Fatal("the wait ignored the context")
	}
}

func (s ErrorSuite) tooLarge(t *testing.T) {
	for name, rep := range s.TooLarge {
		t.Run(name, func(t *testing.T) {
			srv := New(t)
			srv.Enqueue(rep)
			_, err := s.generate(context.Background(), t, srv)
			if !errors.Is(err, harness.ErrContextTooLarge) {
				t.Fatalf("err = %v, want ErrContextTooLarge", err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("retried %d times", len(srv.Requests())-1)
			}
		})
	}
}

package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

type warnings struct {
	mu     sync.Mutex
	events []harness.Event
}

func (w *warnings) ctx() context.Context {
	return harness.WithObserver(context.Background(), func(e harness.Event) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.events = append(w.events, e)
	})
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"0.05"}}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
		wiretest.JSON(okBody),
	)
	var w warnings
	start := time.Now()
	resp, err := newTestModel(t, srv, nil).Generate(w.ctx(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Errorf("retried after %s, before the 50ms Retry-After", el)
	}
	if resp.Message.Text() != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("answer %q after %d requests", resp.Message.Text(), len(srv.Requests()))
	}
	if len(w.events) != 1 || w.events[0].Data["delay_ms"] != int64(50) || w.events[0].Data["retry_after"] != true {
		t.Errorf("events = %+v", w.events)
	}
}

func TestRetryHTTPDate(t *testing.T) {
	srv := wiretest.New(t)
	// A date in the past: retry at once.
	srv.Enqueue(wiretest.Reply{Status: 503, Header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, Body: `{"type":"error","error":{"type":"api_error","message":"down"}}`}, wiretest.JSON(okBody))
	var w warnings
	if _, err := newTestModel(t, srv, nil).Generate(w.ctx(), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	if len(w.events) != 1 || w.events[0].Data["delay_ms"] != int64(0) || w.events[0].Data["retry_after"] != true {
		t.Errorf("events = %+v", w.events)
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		wiretest.Error(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
		wiretest.Error(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		wiretest.Reply{Drop: true},
		wiretest.JSON(okBody),
	)
	resp, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "ok" || len(srv.Requests()) != 4 {
		t.Errorf("answer %q after %d requests", resp.Message.Text(), len(srv.Requests()))
	}
}

func TestNoRetryOn4xx(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409} {
		srv := wiretest.New(t)
		srv.Enqueue(wiretest.Reply{Status: status, Header: http.Header{"Request-Id": {"req_9"}}, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: bad thing"}}`}, wiretest.JSON(okBody))
		_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Type != "invalid_request_error" {
			t.Fatalf("%d: err = %v", status, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests", status, n)
		}
		if !strings.Contains(err.Error(), "messages.1: bad thing (request-id req_9)") {
			t.Errorf("%d: %q", status, err)
		}
		var sdk *anthropic.Error
		if !errors.As(err, &sdk) {
			t.Errorf("%d: the SDK's error is not in the chain", status)
		}
		if errors.Is(err, harness.ErrContextTooLarge) {
			t.Errorf("%d: reported as too large", status)
		}
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := wiretest.New(t)
	// The server asks for 30 minutes and the context is cancelled as the
	// wait begins (the retry's warning): only honouring the context can
	// return before the test's hang bound.
	srv.Enqueue(wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"1800"}}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = harness.WithObserver(ctx, func(e harness.Event) {
		if e.Kind == harness.EventWarning {
			cancel()
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := newTestModel(t, srv, func(o *Options) { o.MaxRetryAfter = time.Hour }).Generate(ctx, userRequest("x"))
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

func TestContextTooLarge(t *testing.T) {
	for name, rep := range map[string]wiretest.Reply{
		"prompt too long":  wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"}}`),
		"with max_tokens":  wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and `+"`max_tokens`"+` exceed context limit: 197000 + 8192 > 200000, decrease input length or `+"`max_tokens`"+` and try again"}}`),
		"413":              wiretest.Error(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`),
		"413 from a proxy": {Status: 413, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>413 Request Entity Too Large</html>"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(rep)
			_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
			if !errors.Is(err, harness.ErrContextTooLarge) || len(srv.Requests()) != 1 {
				t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
			}
		})
	}
}

func FuzzFromBody(f *testing.F) {
	for _, s := range []string{
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 1 tokens > 0 maximum"}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"error":"x"}`, `[]`, `null`, "plain", "",
	} {
		f.Add(400, []byte(s))
		f.Add(0, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := fromBody(status, nil, body, errors.New("sdk"))
		_ = e.Error()
		if errors.Is(e, harness.ErrContextTooLarge) != e.TooLarge {
			t.Fatal("TooLarge and the error chain disagree")
		}
		_ = classify(e)
	})
}

package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
	"github.com/agentharness/harness/provider/internal/retry"
)

const okBody = `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

// warnings collects the retry events a model reports through ctx.
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
		wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"0.05"}}, Body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`},
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
	if len(w.events) != 1 || w.events[0].Kind != harness.EventWarning || w.events[0].Data["delay_ms"] != int64(50) || w.events[0].Data["retry_after"] != true {
		t.Errorf("events = %+v", w.events)
	}
	if d := w.events[0].Detail; !strings.Contains(d, "429") || !strings.Contains(d, "Rate limit reached") {
		t.Errorf("detail = %q", d)
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(
		wiretest.Error(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`),
		// A compatible server's proxy may answer in plain text.
		wiretest.Reply{Status: 503, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "upstream connect error"},
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
	for _, status := range []int{400, 401, 403, 404, 408, 409, 422} {
		srv := wiretest.New(t)
		srv.Enqueue(wiretest.Error(status, `{"error":{"message":"bad thing","type":"invalid_request_error","code":"bad_code"}}`), wiretest.JSON(okBody))
		_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status {
			t.Fatalf("%d: err = %v", status, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests, want 1", status, n)
		}
		want := "invalid_request_error: bad_code: bad thing"
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%d: %q does not contain %q", status, err, want)
		}
		var sdk *openai.Error
		if !errors.As(err, &sdk) {
			t.Errorf("%d: the SDK's error is not in the chain", status)
		}
		if errors.Is(err, harness.ErrContextTooLarge) {
			t.Errorf("%d: reported as too large", status)
		}
	}
}

func TestXShouldRetryHeader(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Reply{Status: 500, Header: http.Header{"X-Should-Retry": {"false"}}, Body: `{"error":{"message":"no"}}`})
	if _, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x")); err == nil || len(srv.Requests()) != 1 {
		t.Errorf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestRetriesRunOut(t *testing.T) {
	srv := wiretest.New(t)
	for range 3 {
		srv.Enqueue(wiretest.Error(502, `{"error":{"message":"bad gateway"}}`))
	}
	_, err := newTestModel(t, srv, func(o *Options) { o.MaxRetries = 2 }).Generate(context.Background(), userRequest("x"))
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "bad gateway") {
		t.Fatalf("err = %v", err)
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("%d requests", len(srv.Requests()))
	}

	srv = wiretest.New(t)
	srv.Enqueue(wiretest.Error(502, `{"error":{"message":"bad gateway"}}`))
	if _, err := newTestModel(t, srv, func(o *Options) { o.MaxRetries = -1 }).Generate(context.Background(), userRequest("x")); err == nil || len(srv.Requests()) != 1 {
		t.Errorf("MaxRetries -1: err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := wiretest.New(t)
	// The server asks for 30 minutes and the context is cancelled as the
	// wait begins (the retry's warning): only honouring the context can
	// return before the test's hang bound.
	srv.Enqueue(wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"1800"}}, Body: `{"error":{"message":"slow down"}}`})
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

func TestRetryAfterTooLong(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"3600"}}, Body: `{"error":{"message":"quota"}}`})
	_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
	if !errors.Is(err, retry.ErrRetryAfterTooLong) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestContextTooLarge(t *testing.T) {
	for name, rep := range map[string]wiretest.Reply{
		"openai":    wiretest.Error(400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
		"vllm":      wiretest.Error(400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}`),
		"llama.cpp": wiretest.Error(400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`),
		"gemini":    wiretest.Error(400, `[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`),
		"413":       {Status: 413, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>Request Entity Too Large</html>"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := wiretest.New(t)
			srv.Enqueue(rep)
			_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
			if !errors.Is(err, harness.ErrContextTooLarge) {
				t.Fatalf("err = %v, want ErrContextTooLarge", err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("retried %d times", len(srv.Requests())-1)
			}
		})
	}
}

func FuzzFromBody(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"x","type":"invalid_request_error","code":"context_length_exceeded"}}`,
		`{"error":{"code":400,"message":"the request exceeds the available context size"}}`,
		`{"object":"error","message":"m","code":400}`, `[]`, `null`, "plain", "",
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

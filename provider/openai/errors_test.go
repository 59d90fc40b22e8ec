package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/internal/wiretest"
)

const okBody = `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

// TestErrors runs the error answers every provider handles alike, in the
// Chat Completions API's format (and compatible servers').
func TestErrors(t *testing.T) {
	wiretest.ErrorSuite{
		Model:             func(t *testing.T, srv *wiretest.Server) harness.Model { return newTestModel(t, srv, nil) },
		OK:                wiretest.JSON(okBody),
		RateLimited:       `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
		RateLimitedDetail: "Rate limit reached",
		Transient: []wiretest.Reply{
			wiretest.Error(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`),
			// A compatible server's proxy may answer in plain text.
			{Status: 503, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "upstream connect error"},
			{Drop: true},
		},
		ClientError: func(status int) wiretest.Reply {
			return wiretest.Error(status, `{"error":{"message":"bad thing","type":"invalid_request_error","code":"bad_code"}}`)
		},
		ClientStatuses:  []int{400, 401, 403, 404, 408, 409, 422},
		ClientErrorText: "invalid_request_error: bad_code: bad thing",
		CheckClientError: func(t *testing.T, status int, err error) {
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status {
				t.Errorf("%d: err = %v", status, err)
			}
			var sdk *openai.Error
			if !errors.As(err, &sdk) {
				t.Errorf("%d: the SDK's error is not in the chain", status)
			}
		},
		TooLarge: map[string]wiretest.Reply{
			"openai":    wiretest.Error(400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			"vllm":      wiretest.Error(400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion).","type":"BadRequestError","param":null,"code":400}`),
			"llama.cpp": wiretest.Error(400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`),
			"gemini":    wiretest.Error(400, `[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`),
			"413":       {Status: 413, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>Request Entity Too Large</html>"},
		},
	}.Run(t)
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

func TestRetryAfterTooLong(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.Reply{Status: 429, Header: http.Header{"Retry-After": {"3600"}}, Body: `{"error":{"message":"quota"}}`})
	_, err := newTestModel(t, srv, nil).Generate(context.Background(), userRequest("x"))
	if !errors.Is(err, retry.ErrRetryAfterTooLong) || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
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

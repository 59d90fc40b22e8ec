package anthropic

import (
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/wiretest"
)

// TestErrors runs the error answers every provider handles alike, in the
// Messages API's format.
func TestErrors(t *testing.T) {
	wiretest.ErrorSuite{
		Model:       func(t *testing.T, srv *wiretest.Server) harness.Model { return newTestModel(t, srv, nil) },
		OK:          wiretest.JSON(okBody),
		RateLimited: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
		Transient: []wiretest.Reply{
			wiretest.Error(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
			wiretest.Error(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			{Drop: true},
		},
		ClientError: func(status int) wiretest.Reply {
			return wiretest.Reply{Status: status, Header: http.Header{"Request-Id": {"req_9"}},
				Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: bad thing"}}`}
		},
		ClientStatuses:  []int{400, 401, 403, 404, 409},
		ClientErrorText: "messages.1: bad thing (request-id req_9)",
		CheckClientError: func(t *testing.T, status int, err error) {
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Type != "invalid_request_error" {
				t.Errorf("%d: err = %v", status, err)
			}
			var sdk *anthropic.Error
			if !errors.As(err, &sdk) {
				t.Errorf("%d: the SDK's error is not in the chain", status)
			}
		},
		TooLarge: map[string]wiretest.Reply{
			"prompt too long":  wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"}}`),
			"with max_tokens":  wiretest.Error(400, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and `+"`max_tokens`"+` exceed context limit: 197000 + 8192 > 200000, decrease input length or `+"`max_tokens`"+` and try again"}}`),
			"413":              wiretest.Error(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`),
			"413 from a proxy": {Status: 413, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>413 Request Entity Too Large</html>"},
		},
	}.Run(t)
}

func TestRetryHTTPDate(t *testing.T) {
	srv := wiretest.New(t)
	// A date in the past: retry at once.
	srv.Enqueue(wiretest.Reply{Status: 503, Header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, Body: `{"type":"error","error":{"type":"api_error","message":"down"}}`}, wiretest.JSON(okBody))
	var w wiretest.Warnings
	if _, err := newTestModel(t, srv, nil).Generate(w.Context(), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	if ev := w.Events(); len(ev) != 1 || ev[0].Data["delay_ms"] != int64(0) || ev[0].Data["retry_after"] != true {
		t.Errorf("events = %+v", ev)
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

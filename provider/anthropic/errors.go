package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/provider/internal/attempt"
)

// APIError is an error answer from the server: its status, the error type
// and message from the body, and the headers (for Retry-After). It wraps
// the SDK's error and, when the prompt did not fit the context window,
// [harness.ErrContextTooLarge].
type APIError struct {
	// StatusCode is the HTTP status; 0 for an error event inside a stream.
	StatusCode int
	// Type is the error type ("overloaded_error", "invalid_request_error").
	Type string
	// Message is the server's own explanation.
	Message string
	// RequestID is the server's request-id, for support requests.
	RequestID string
	// Header holds the response headers (nil for a stream's error event).
	Header http.Header
	// TooLarge is set when the server rejected the prompt as too long.
	TooLarge bool
	err      error
}

// Error describes the failure with the server's own message.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("anthropic: ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		b.WriteString("error event in the stream")
	}
	if e.Type != "" {
		b.WriteString(": ")
		b.WriteString(e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request-id %s)", e.RequestID)
	}
	return b.String()
}

// Unwrap returns the SDK's error and, for an oversized prompt,
// harness.ErrContextTooLarge.
func (e *APIError) Unwrap() []error {
	errs := []error{e.err}
	if e.TooLarge {
		errs = append(errs, harness.ErrContextTooLarge)
	}
	return errs
}

// streamErrorPrefix starts the SDK's error for an error event it could not
// turn into an API error.
const streamErrorPrefix = "received error while streaming: "

// describe turns the SDK's error for one attempt into an APIError when the
// server answered with an error, in the status line or as an error event
// of a stream; transport errors pass as they are.
func describe(err error, info *attempt.Info) error {
	status := info.Status()
	var sdk *anthropic.Error
	isSDK := errors.As(err, &sdk)
	switch {
	case status >= 400:
		return fromBody(status, info.Header(), info.Body(), err)
	case isSDK && sdk.StatusCode >= 400:
		// No response was recorded (a middleware of the caller's answered).
		return fromBody(sdk.StatusCode, nil, []byte(sdk.RawJSON()), err)
	case isSDK:
		// An error event in a 200 stream.
		return fromBody(0, nil, []byte(sdk.RawJSON()), err)
	case strings.HasPrefix(err.Error(), streamErrorPrefix):
		return fromBody(0, nil, []byte(strings.TrimPrefix(err.Error(), streamErrorPrefix)), err)
	}
	return fmt.Errorf("anthropic: %w", err)
}

func fromBody(status int, h http.Header, body []byte, err error) *APIError {
	e := &APIError{StatusCode: status, Header: h, err: err, Message: attempt.Message(body)}
	if h != nil {
		e.RequestID = h.Get("Request-Id")
	}
	var v struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &v) == nil {
		e.Type = v.Error.Type
		if e.RequestID == "" {
			e.RequestID = v.RequestID
		}
	}
	e.TooLarge = tooLarge(e)
	return e
}

// tooLarge recognises an oversized prompt: 413 request_too_large (the
// request is over the byte limit), or 400 invalid_request_error "prompt is
// too long: N tokens > M maximum" and its sibling "input length and
// max_tokens exceed context limit".
func tooLarge(e *APIError) bool {
	if e.StatusCode == http.StatusRequestEntityTooLarge || e.Type == "request_too_large" {
		return true
	}
	if e.StatusCode != http.StatusBadRequest && e.StatusCode != 0 {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, p := range []string{"prompt is too long", "exceed context limit", "exceeds the context window", "context window exceeded"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// retryableTypes are the error types worth retrying when they arrive as an
// event inside a stream (where no status says so).
var retryableTypes = map[string]bool{"overloaded_error": true, "api_error": true, "rate_limit_error": true, "timeout_error": true}

// classify says whether a failed attempt is worth retrying.
func classify(err error) retry.Verdict {
	var e *APIError
	if errors.As(err, &e) {
		if e.TooLarge {
			return retry.Verdict{}
		}
		if e.StatusCode == 0 {
			return retry.Verdict{Retry: retryableTypes[e.Type]}
		}
		return retry.Response(e.StatusCode, e.Header, time.Now())
	}
	return retry.Verdict{Retry: retry.Transient(err)}
}

package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/provider/internal/attempt"
)

// APIError is an error answer from the server: its status, the error type,
// code and message from the body, and the headers (for Retry-After). It
// wraps the SDK's error and, when the prompt did not fit the context
// window, [harness.ErrContextTooLarge].
type APIError struct {
	// StatusCode is the HTTP status; 0 for an error event inside a stream.
	StatusCode int
	// Type and Code are the body's error.type and error.code
	// ("invalid_request_error", "context_length_exceeded").
	Type, Code string
	// Message is the server's own explanation.
	Message string
	// Header holds the response headers (nil for a stream's error event).
	Header http.Header
	// TooLarge is set when the server rejected the prompt as too long.
	TooLarge bool
	err      error
}

// Error describes the failure with the server's own message.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("openai: ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		b.WriteString("error event in the stream")
	}
	for _, s := range []string{e.Type, e.Code} {
		if s != "" {
			b.WriteString(": ")
			b.WriteString(s)
		}
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
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

// describe turns the SDK's error for one attempt into an APIError when the
// server answered with an error (status from the recorded response, so a
// body the SDK could not parse still counts); transport errors pass as
// they are.
func describe(err error, info *attempt.Info) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return fromBody(0, nil, se.Event.Data, err)
	}
	status := info.Status()
	var sdk *openai.Error
	if errors.As(err, &sdk) && status == 0 {
		status = sdk.StatusCode
	}
	if status < 400 {
		return fmt.Errorf("openai: %w", err)
	}
	e := fromBody(status, info.Header(), info.Body(), err)
	if sdk != nil {
		// The SDK parsed the body too; prefer its fields when ours are empty.
		e.Type = firstNonEmpty(e.Type, sdk.Type)
		e.Code = firstNonEmpty(e.Code, sdk.Code)
		e.Message = firstNonEmpty(e.Message, sdk.Message)
	}
	e.TooLarge = tooLarge(e)
	return e
}

func fromBody(status int, h http.Header, body []byte, err error) *APIError {
	e := &APIError{StatusCode: status, Header: h, err: err, Message: attempt.Message(body)}
	var v struct {
		Error struct {
			Type string          `json:"type"`
			Code json.RawMessage `json:"code"`
		} `json:"error"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &v) == nil {
		e.Type = firstNonEmpty(v.Error.Type, v.Type)
		var code string
		if json.Unmarshal(v.Error.Code, &code) == nil {
			e.Code = code
		}
	}
	e.TooLarge = tooLarge(e)
	return e
}

// tooLargePhrases are the ways OpenAI-compatible servers word an
// oversized prompt: OpenAI, DeepSeek and vLLM ("maximum context length"),
// llama.cpp ("exceeds the available context size"), Gemini ("exceeds the
// maximum number of tokens"), OpenRouter, Ollama and others.
var tooLargePhrases = []string{
	"maximum context length",
	"context length exceeded",
	"context_length_exceeded",
	"exceeds the available context size",
	"exceeds the context window",
	"exceeds the maximum number of tokens",
	"prompt is too long",
	"too many tokens",
	"input is too long",
}

func tooLarge(e *APIError) bool {
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" || e.StatusCode == http.StatusRequestEntityTooLarge {
		return true
	}
	if e.StatusCode != 0 && e.StatusCode != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, p := range tooLargePhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// classify says whether a failed attempt is worth retrying.
func classify(err error) retry.Verdict {
	var e *APIError
	if errors.As(err, &e) {
		if e.TooLarge {
			return retry.Verdict{}
		}
		if e.StatusCode == 0 {
			// An error event mid-stream: the server failed, not the request.
			return retry.Verdict{Retry: e.Type == "server_error" || e.Type == "rate_limit_error" || e.Code == "rate_limit_exceeded"}
		}
		return retry.Response(e.StatusCode, e.Header, time.Now())
	}
	return retry.Verdict{Retry: retry.Transient(err)}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

package openai

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentharness/harness/provider/catalog"
	"github.com/agentharness/harness/provider/internal/endpoint"
)

// The environment variables read when Options leave a field empty.
const (
	envAPIKey  = "OPENAI_API_KEY"
	envBaseURL = "OPENAI_BASE_URL"
)

// defaultBaseURL is OpenAI's own endpoint.
const defaultBaseURL = catalog.OpenAIEndpoint

// defaultRequestTimeout bounds one non-streamed attempt.
const defaultRequestTimeout = 10 * time.Minute

// Options configure a Model. Model is required; the zero value of every
// other field means its default.
type Options struct {
	// Model is the model name sent with every request ("gpt-5-mini").
	Model string
	// BaseURL is the API root, ending in /v1 for most servers
	// ("http://127.0.0.1:8080/v1"). Empty means $OPENAI_BASE_URL, else
	// defaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Empty means $OPENAI_API_KEY; a key
	// is required (servers that check none accept any value).
	APIKey string
	// MaxTokens caps a reply when the request sets no cap; 0 sends none.
	MaxTokens int
	// LegacyMaxTokens sends the cap as max_tokens instead of
	// max_completion_tokens, for servers that know only the older name.
	LegacyMaxTokens bool
	// MaxRetries is the number of retries after a transient failure; 0
	// means 4, a negative value none.
	MaxRetries int
	// RetryBaseDelay is the first backoff (default 500 ms), doubling up to
	// RetryMaxDelay (default 30 s), with jitter.
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After honoured (default 2 min); a
	// server asking for more ends the retries with its error.
	MaxRetryAfter time.Duration
	// RequestTimeout bounds one non-streamed attempt (default 10 min).
	// Streams are bounded by the caller's context only.
	RequestTimeout time.Duration
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// ErrNoAPIKey is returned by New when no key is configured.
var ErrNoAPIKey = errors.New("openai: no API key: set " + envAPIKey + " (any non-empty value for a server that checks none, such as a local llama.cpp or Ollama)")

// resolve fills in defaults from the environment and checks the result.
func (o Options) resolve() (Options, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(o.Model) == "" {
		return o, errors.New("openai: Options.Model is required")
	}
	base, err := endpoint.BaseURL("openai", o.BaseURL, getenv(envBaseURL), defaultBaseURL)
	if err != nil {
		return o, err
	}
	o.BaseURL = base
	if o.APIKey == "" {
		o.APIKey = strings.TrimSpace(getenv(envAPIKey))
	}
	if o.APIKey == "" {
		return o, ErrNoAPIKey
	}
	if o.MaxTokens < 0 {
		return o, fmt.Errorf("openai: MaxTokens %d is negative", o.MaxTokens)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	return o, nil
}

package anthropic

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
	envAPIKey    = "ANTHROPIC_API_KEY"
	envAuthToken = "ANTHROPIC_AUTH_TOKEN"
	envBaseURL   = "ANTHROPIC_BASE_URL"
)

// Defaults of Options.
const (
	defaultBaseURL        = catalog.AnthropicEndpoint
	defaultMaxTokens      = 8192
	defaultRequestTimeout = 10 * time.Minute
)

// Options configure a Model. Model is required; the zero value of every
// other field means its default.
type Options struct {
	// Model is the model name ("claude-sonnet-4-5").
	Model string
	// BaseURL is the API root, without /v1. Empty means
	// $ANTHROPIC_BASE_URL, else defaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key. Empty means $ANTHROPIC_API_KEY.
	APIKey string
	// AuthToken is sent as Authorization: Bearer when there is no API key.
	// Empty means $ANTHROPIC_AUTH_TOKEN.
	AuthToken string
	// MaxTokens caps a reply when the request sets no cap (the API
	// requires one); default defaultMaxTokens.
	MaxTokens int
	// NoCache leaves out the cache_control breakpoints.
	NoCache bool
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

// ErrNoAPIKey is returned by New when no credential is configured.
var ErrNoAPIKey = errors.New("anthropic: no API key: set " + envAPIKey + " (or " + envAuthToken + " for a bearer token)")

func (o Options) resolve() (Options, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(o.Model) == "" {
		return o, errors.New("anthropic: Options.Model is required")
	}
	base, err := endpoint.BaseURL("anthropic", o.BaseURL, getenv(envBaseURL), defaultBaseURL)
	if err != nil {
		return o, err
	}
	o.BaseURL = base
	if o.APIKey == "" && o.AuthToken == "" {
		o.APIKey = strings.TrimSpace(getenv(envAPIKey))
		if o.APIKey == "" {
			o.AuthToken = strings.TrimSpace(getenv(envAuthToken))
		}
	}
	if o.APIKey == "" && o.AuthToken == "" {
		return o, ErrNoAPIKey
	}
	if o.MaxTokens < 0 {
		return o, fmt.Errorf("anthropic: MaxTokens %d is negative", o.MaxTokens)
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = defaultMaxTokens
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	return o, nil
}

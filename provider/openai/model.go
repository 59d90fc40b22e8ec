package openai

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/provider/internal/attempt"
)

// Model is a Chat Completions model. It implements [harness.Model] and
// [harness.StreamingModel] and is safe for concurrent use.
type Model struct {
	opts   Options
	client openai.Client
}

var _ harness.StreamingModel = (*Model)(nil)

// New returns a model for opts.Model. It fails when no API key is
// configured (the message names OPENAI_API_KEY) or the base URL is not an
// HTTP URL; it does not contact the server.
func New(opts *Options) (*Model, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	ropts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithAPIKey(o.APIKey),
		// Retries are ours (internal/retry): one policy for both
		// providers, and streams retried only while nothing was shown.
		option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return attempt.Middleware(r, next)
		}),
	}
	if o.HTTPClient != nil {
		ropts = append(ropts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Model{opts: o, client: openai.NewClient(ropts...)}, nil
}

// modelName returns the model name requests are sent with.
func (m *Model) modelName() string { return m.opts.Model }

// Generate sends req and returns the reply.
func (m *Model) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	params, err := m.params(req, false)
	if err != nil {
		return nil, err
	}
	var resp *harness.Response
	err = retry.Do(ctx, m.policy(ctx, req), classify, func(ctx context.Context, _ int) error {
		ctx, info := attempt.With(ctx)
		cc, err := m.client.Chat.Completions.New(ctx, params, option.WithRequestTimeout(m.opts.RequestTimeout))
		if err != nil {
			return describe(err, info)
		}
		resp, err = fromCompletion(cc)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// GenerateStream sends req as a streamed request and calls onText with each
// piece of text (and refusal) as it arrives. A failure before any text was
// delivered is retried like Generate's; after that it is returned, since
// text already shown cannot be taken back.
func (m *Model) GenerateStream(ctx context.Context, req *harness.Request, onText func(string)) (*harness.Response, error) {
	params, err := m.params(req, true)
	if err != nil {
		return nil, err
	}
	var (
		resp  *harness.Response
		shown bool
	)
	classifyStream := func(err error) retry.Verdict {
		if shown {
			return retry.Verdict{}
		}
		return classify(err)
	}
	err = retry.Do(ctx, m.policy(ctx, req), classifyStream, func(ctx context.Context, _ int) error {
		ctx, info := attempt.With(ctx)
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var acc accumulator
		for stream.Next() {
			if text := acc.add(stream.Current()); text != "" && onText != nil {
				shown = true
				onText(text)
			}
		}
		if err := stream.Err(); err != nil {
			return describe(err, info)
		}
		if !acc.finished() {
			return fmt.Errorf("openai: %w (no finish_reason)", retry.ErrIncompleteStream)
		}
		resp, err = acc.response()
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// policy is the retry policy of one call; retries are reported as warning
// events through the observer the agent put in ctx.
func (m *Model) policy(ctx context.Context, req *harness.Request) retry.Policy {
	return retry.Policy{
		MaxRetries:    m.opts.MaxRetries,
		BaseDelay:     m.opts.RetryBaseDelay,
		MaxDelay:      m.opts.RetryMaxDelay,
		MaxRetryAfter: m.opts.MaxRetryAfter,
		OnRetry: func(a retry.Attempt) {
			harness.Emit(ctx, harness.Event{
				Kind: harness.EventWarning, Turn: req.Turn, Round: req.Round,
				Detail: fmt.Sprintf("retrying (%d/%d) in %s: openai: %v", a.Retry, a.Max, a.Delay.Round(time.Millisecond), a.Err),
				Data:   map[string]any{"provider": "openai", "retry": a.Retry, "delay_ms": a.Delay.Milliseconds(), "retry_after": a.FromServer},
			})
		},
	}
}

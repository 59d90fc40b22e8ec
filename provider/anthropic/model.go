package anthropic

import (
	"context"
	"fmt"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/retry"
	"github.com/agentharness/harness/provider/internal/attempt"
)

// Model is a Messages API model. It implements [harness.Model] and
// [harness.StreamingModel] and is safe for concurrent use.
type Model struct {
	opts   Options
	client anthropic.Client
}

var _ harness.StreamingModel = (*Model)(nil)

// New returns a model for opts.Model. It fails when no credential is
// configured (the message names ANTHROPIC_API_KEY) or the base URL is not
// an HTTP URL; it does not contact the server.
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
		// Credentials and base URL are resolved above, from the two
		// documented variables only; the SDK's chain (profiles, federation)
		// stays out of it.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		// Retries are ours (internal/retry): one policy for both
		// providers, and streams retried only while nothing was shown.
		option.WithMaxRetries(0),
		option.WithMiddleware(attempt.Middleware),
	}
	if o.APIKey != "" {
		// The documented header for API keys.
		ropts = append(ropts, option.WithHeader("x-api-key", o.APIKey))
	} else {
		ropts = append(ropts, option.WithAuthToken(o.AuthToken))
	}
	if o.HTTPClient != nil {
		ropts = append(ropts, option.WithHTTPClient(o.HTTPClient))
	}
	return &Model{opts: o, client: anthropic.NewClient(ropts...)}, nil
}

// modelName returns the model name requests are sent with.
func (m *Model) modelName() string { return m.opts.Model }

// Generate sends req and returns the reply.
func (m *Model) Generate(ctx context.Context, req *harness.Request) (*harness.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var resp *harness.Response
	err = retry.Do(ctx, m.policy(ctx, req), classify, func(ctx context.Context, _ int) error {
		ctx, info := attempt.With(ctx)
		msg, err := m.client.Messages.New(ctx, params, option.WithRequestTimeout(m.opts.RequestTimeout))
		if err != nil {
			return describe(err, info)
		}
		resp, err = fromMessage(msg)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// GenerateStream sends req as a streamed request and calls onText with each
// piece of text as it arrives. A failure before any text was delivered is
// retried like Generate's; after that it is returned, since text already
// shown cannot be taken back.
func (m *Model) GenerateStream(ctx context.Context, req *harness.Request, onText func(string)) (*harness.Response, error) {
	params, err := m.params(req)
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
		stream := m.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var acc accumulator
		for stream.Next() {
			text, err := acc.add(stream.Current())
			if err != nil {
				return err
			}
			if text != "" && onText != nil {
				shown = true
				onText(text)
			}
		}
		if err := stream.Err(); err != nil {
			return describe(err, info)
		}
		if !acc.stopped {
			return fmt.Errorf("anthropic: %w (no message_stop)", retry.ErrIncompleteStream)
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
				Detail: fmt.Sprintf("retrying (%d/%d) in %s: anthropic: %v", a.Retry, a.Max, a.Delay.Round(time.Millisecond), a.Err),
				Data:   map[string]any{"provider": "anthropic", "retry": a.Retry, "delay_ms": a.Delay.Milliseconds(), "retry_after": a.FromServer},
			})
		},
	}
}

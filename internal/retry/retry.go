package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Defaults of a [Policy].
const (
	DefaultMaxRetries    = 4
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Policy says how often and how long to wait before trying again.
// Zero fields mean the defaults.
type Policy struct {
	// MaxRetries is the number of attempts after the first one. 0 means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// BaseDelay is the wait before the first retry; it doubles with every
	// further retry up to MaxDelay. The wait actually used is drawn from
	// [d/2, d) (equal jitter), so clients that failed together spread out.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest server-requested wait (Retry-After)
	// honoured; a longer one ends the retries with the error, since
	// sleeping for an hour inside one model call helps nobody.
	MaxRetryAfter time.Duration
	// OnRetry, when set, is told about every retry before its wait.
	OnRetry func(Attempt)
	// Rand returns a number in [0, 1) for the jitter; nil uses math/rand/v2.
	Rand func() float64
}

// Attempt describes a retry about to happen.
type Attempt struct {
	// Retry counts the retries, from 1.
	Retry int
	// Max is the number of retries allowed.
	Max int
	// Delay is the wait before the retry.
	Delay time.Duration
	// FromServer is set when Delay comes from a Retry-After header.
	FromServer bool
	// Err is the failure being retried.
	Err error
}

// Verdict is what a classifier says about a failure.
type Verdict struct {
	// Retry is set when trying again may succeed.
	Retry bool
	// After is the wait the server asked for; HasAfter says it did.
	After    time.Duration
	HasAfter bool
}

// ErrRetryAfterTooLong is wrapped in the error returned when the server asks
// to wait longer than Policy.MaxRetryAfter.
var ErrRetryAfterTooLong = errors.New("the server asked to wait longer than the retry limit")

func (p Policy) withDefaults() Policy {
	switch {
	case p.MaxRetries == 0:
		p.MaxRetries = DefaultMaxRetries
	case p.MaxRetries < 0:
		p.MaxRetries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Backoff returns the wait before retry n (from 1) without a server hint:
// BaseDelay·2^(n−1), capped at MaxDelay, jittered into [d/2, d).
func (p Policy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	d := float64(p.BaseDelay) * math.Pow(2, float64(max(n-1, 0)))
	if d > float64(p.MaxDelay) || math.IsInf(d, 0) {
		d = float64(p.MaxDelay)
	}
	r := p.Rand()
	if r < 0 || r >= 1 {
		r = 0
	}
	return time.Duration(d/2 + r*d/2)
}

// Do calls fn until it succeeds, fails in a way classify says is final,
// the retries run out, or ctx ends (also during a wait). fn receives the
// attempt number from 0. The error returned is fn's last one, wrapped with
// the number of attempts when more than one was made.
func Do(ctx context.Context, p Policy, classify func(error) Verdict, fn func(ctx context.Context, attempt int) error) error {
	p = p.withDefaults()
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn(ctx, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			// The caller gave up; whatever fn saw is a consequence.
			return err
		}
		v := classify(err)
		if !v.Retry {
			return wrapAttempts(err, attempt+1)
		}
		if attempt >= p.MaxRetries {
			return fmt.Errorf("gave up after %d attempts: %w", attempt+1, err)
		}
		delay := p.Backoff(attempt + 1)
		if v.HasAfter {
			if v.After > p.MaxRetryAfter {
				return fmt.Errorf("%w (%s > %s) after %d attempt(s): %w", ErrRetryAfterTooLong, v.After.Round(time.Second), p.MaxRetryAfter, attempt+1, err)
			}
			delay = max(v.After, 0)
		}
		if p.OnRetry != nil {
			p.OnRetry(Attempt{Retry: attempt + 1, Max: p.MaxRetries, Delay: delay, FromServer: v.HasAfter, Err: err})
		}
		if serr := sleep(ctx, delay); serr != nil {
			return fmt.Errorf("%w while waiting to retry after: %w", serr, err)
		}
	}
}

func wrapAttempts(err error, attempts int) error {
	if attempts <= 1 {
		return err
	}
	return fmt.Errorf("after %d attempts: %w", attempts, err)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

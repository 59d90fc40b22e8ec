package harness

import (
	"context"
	"time"
)

// WithIdle returns ctx carrying how long the conversation was idle before
// the request about to be built: the time since the previous response. A
// driver that knows it better than the engine's clock (one whose steps run
// elsewhere and that knows when the previous step was answered) says so,
// and [Engine.View] sets
// View.Idle from it, for policies that act when the provider's prompt
// cache has expired. Without it (or with 0) the engine measures the time
// since it last answered the conversation (Options.Now), or, for a
// conversation loaded from a store, since its newest round's Answered.
func WithIdle(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, idleKey, d)
}

// idleFrom returns the idle time ctx carries (see WithIdle), 0 when none.
func idleFrom(ctx context.Context) time.Duration {
	d, _ := ctx.Value(idleKey).(time.Duration)
	return d
}
